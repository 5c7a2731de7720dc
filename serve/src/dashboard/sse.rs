//! The Server-Sent Events stream of a live run: every event of the run appended after
//! the page's offset, one SSE message each (`event: update`, `id:` its byte offset, so
//! a reconnecting browser resumes with `Last-Event-ID`), woken by the project's file
//! watcher. A slow safety tick re-reads the log in case a change notification was
//! missed; the browser never polls.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use axum::response::sse::Event as SseEvent;
use futures_util::Stream;
use tokio::sync::watch;

use super::live::Follower;

/// How often the log is re-read without a change notification.
const SAFETY_TICK: Duration = Duration::from_secs(2);

struct State {
    follower: Option<Follower>,
    changes: Option<watch::Receiver<u64>>,
    queue: VecDeque<SseEvent>,
    /// Updates at or before this offset were already on the page.
    from: u64,
    primed: bool,
    done: bool,
    told_corrupt: usize,
}

/// The stream for `follower` (fresh, at offset 0), sending what lies after `from`.
pub fn stream(
    follower: Follower,
    changes: Option<watch::Receiver<u64>>,
    from: u64,
    watch_error: Option<String>,
) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    let mut queue = VecDeque::new();
    if let Some(why) = watch_error {
        queue.push_back(notice(&format!(
            "{why}; updates come every few seconds instead"
        )));
    }
    let state = State {
        follower: Some(follower),
        changes,
        queue,
        from,
        primed: false,
        done: false,
        told_corrupt: 0,
    };
    futures_util::stream::unfold(state, |mut s| async move {
        loop {
            if let Some(ev) = s.queue.pop_front() {
                return Some((Ok(ev), s));
            }
            if s.done {
                return None;
            }
            if s.primed {
                wait(&mut s.changes).await;
            }
            s.primed = true;
            let follower = s.follower.take()?;
            let joined = tokio::task::spawn_blocking(move || {
                let mut f = follower;
                let read = f.catch_up();
                (f, read)
            })
            .await;
            let Ok((follower, read)) = joined else {
                s.queue
                    .push_back(notice("reading the event log failed; reload the page"));
                s.done = true;
                continue;
            };
            match read {
                Ok(updates) => {
                    for u in updates.into_iter().filter(|u| u.offset > s.from) {
                        s.queue.push_back(
                            SseEvent::default()
                                .event("update")
                                .id(u.offset.to_string())
                                .data(u.data.to_string()),
                        );
                    }
                }
                Err(e) => s
                    .queue
                    .push_back(notice(&format!("cannot read the event log: {e}"))),
            }
            if follower.corrupt_lines > s.told_corrupt {
                s.told_corrupt = follower.corrupt_lines;
                s.queue.push_back(notice(&format!(
                    "unreadable lines in events.jsonl skipped: {}",
                    follower.corrupt_lines
                )));
            }
            if follower.restarted {
                s.queue.push_back(notice(
                    "events.jsonl was truncated or replaced; reload the page",
                ));
                s.done = true;
            }
            if follower.is_over() {
                s.queue.push_back(
                    SseEvent::default()
                        .event("end")
                        .data(follower.progress.status.clone()),
                );
                s.done = true;
            }
            s.follower = Some(follower);
        }
    })
}

async fn wait(changes: &mut Option<watch::Receiver<u64>>) {
    match changes {
        Some(rx) => {
            tokio::select! {
                changed = rx.changed() => {
                    if changed.is_err() {
                        *changes = None;
                    }
                }
                _ = tokio::time::sleep(SAFETY_TICK) => {}
            }
        }
        None => tokio::time::sleep(SAFETY_TICK).await,
    }
}

fn notice(text: &str) -> SseEvent {
    SseEvent::default().event("notice").data(text)
}
