//! The stdio transport: a reader thread turning stdin into messages (reporting and
//! skipping malformed frames, see [`crate::frames`]) and a writer thread printing
//! messages to stdout. `lsp_server`'s own stdio transport ends the session at the first
//! bad frame; this one keeps serving.

use std::io::{self, Write};
use std::thread;

use crossbeam_channel::{Sender, unbounded};
use lsp_server::{Connection, Message, Notification};
use lsp_types::notification::{LogMessage, Notification as _};

use crate::frames::{Frame, FrameReader};

pub struct IoThreads {
    reader: thread::JoinHandle<io::Result<()>>,
    writer: thread::JoinHandle<io::Result<()>>,
}

impl IoThreads {
    pub fn join(self) -> io::Result<()> {
        let reader = self.reader.join();
        let writer = self.writer.join();
        for result in [reader, writer] {
            match result {
                Ok(r) => r?,
                Err(_) => return Err(io::Error::other("an I/O thread of the server panicked")),
            }
        }
        Ok(())
    }
}

/// A connection over this process's stdin and stdout.
pub fn stdio() -> (Connection, IoThreads) {
    io(io::BufReader::new(io::stdin()), io::stdout())
}

/// A connection reading frames from `input` and writing them to `output` (stdio, or
/// pipes in tests).
pub fn io(
    input: impl io::BufRead + Send + 'static,
    output: impl Write + Send + 'static,
) -> (Connection, IoThreads) {
    let (to_client, outgoing) = unbounded::<Message>();
    let (incoming, from_client) = unbounded::<Message>();
    let writer = thread::spawn(move || {
        let mut output = output;
        for msg in outgoing {
            msg.write(&mut output)?;
            output.flush()?;
        }
        Ok(())
    });
    let log = to_client.clone();
    let reader = thread::spawn(move || read_loop(input, &incoming, &log));
    let conn = Connection {
        sender: to_client,
        receiver: from_client,
    };
    (conn, IoThreads { reader, writer })
}

/// Forwards messages until the stream ends or the client says `exit`.
fn read_loop(
    input: impl io::BufRead,
    incoming: &Sender<Message>,
    log: &Sender<Message>,
) -> io::Result<()> {
    let mut frames = FrameReader::new(input);
    while let Some(frame) = frames.next_frame()? {
        match frame {
            Frame::Message(msg) => {
                let exit = matches!(&msg, Message::Notification(n) if n.method == "exit");
                if incoming.send(msg).is_err() || exit {
                    break;
                }
            }
            Frame::Malformed(why) => {
                let message = format!("factory-lsp ignored a malformed message: {why}");
                eprintln!("{message}");
                let params = lsp_types::LogMessageParams {
                    typ: lsp_types::MessageType::ERROR,
                    message,
                };
                // The client may be gone; reading on finds out.
                let _ = log.send(Notification::new(LogMessage::METHOD.into(), params).into());
            }
        }
    }
    Ok(())
}
