//! Edit-to-diagnostics latency on a 2,000-node file, through the real server loop, against
//! a cold check of the same file. Ignored by default (it measures, it does not verify
//! behaviour beyond the file checking clean); run for docs/performance.md with:
//!
//! cargo test --release -p factory-lsp --test latency -- --ignored --nocapture

use std::sync::Arc;
use std::time::{Duration, Instant};

use factory_compiler::check::file_diagnostics;
use factory_compiler::db::{Database, Db};
use factory_compiler::host::FsLoader;
use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{Value, json};

/// The allocator of the `factory` binary, which serves `factory lsp`.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Layers of 7 nodes: `h -> f -> w1, w2, w3 -> j -> g`, the gate reloops to `h`.
fn layered(layers: usize) -> String {
    let mut decls = String::new();
    let mut flow = String::from("        start -> h0\n");
    for i in 0..layers {
        decls.push_str(&format!(
            "    /// Head of layer {i}.\n    agent h{i} {{ role: builder task: \"Layer {i}: {{{{goal}}}}\" writes: \"out/h{i}.md\" check: exists timeout: 600 }}\n    fork f{i}\n"
        ));
        for w in 1..=3 {
            decls.push_str(&format!(
                "    agent w{i}_{w} {{ role: researcher writes: \"out/w{i}_{w}.md\" timeout: 600 }}\n"
            ));
        }
        decls.push_str(&format!(
            "    join j{i}\n    gate g{i} by agent(ceo) \"Layer {i} good?\"\n"
        ));
        let next = if i + 1 == layers {
            "end".to_string()
        } else {
            format!("h{}", i + 1)
        };
        flow.push_str(&format!(
            "        h{i} -> f{i} -> w{i}_1, w{i}_2, w{i}_3 -> j{i} -> g{i}\n        g{i}.proceed -> {next}\n        g{i}.reloop(max 2) -> h{i}\n        g{i}.halt -> end\n"
        ));
    }
    format!("//! Generated.\nworkflow big {{\n{decls}\n    flow {{\n{flow}    }}\n}}\n")
}

fn wait_diagnostics(conn: &Connection) -> usize {
    loop {
        match conn
            .receiver
            .recv_timeout(Duration::from_secs(120))
            .expect("diagnostics")
        {
            Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                return n.params["diagnostics"].as_array().map_or(0, Vec::len);
            }
            _ => {}
        }
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[test]
#[ignore]
fn edit_to_diagnostics_on_2000_nodes() {
    let layers = 2000 / 7 + 1;
    let text = layered(layers);
    let nodes = layers * 7;
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let path = root.join("big.fwf");
    std::fs::write(&path, &text).unwrap();
    let uri = format!("file://{}", path.display());

    // Cold check: a fresh database, the whole pipeline.
    let mut cold = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let mut db = Database::new(Arc::new(FsLoader::default()), None);
        db.set_text(&path.to_string_lossy(), text.clone());
        let n = file_diagnostics(&db, db.file(&path.to_string_lossy())).len();
        cold.push(start.elapsed());
        assert_eq!(n, 0, "the generated file checks clean");
    }

    // The compiler alone on a long-lived database: the same one-character edit.
    let key = path.to_string_lossy().into_owned();
    let mut db = Database::new(Arc::new(FsLoader::default()), None);
    db.set_text(&key, text.clone());
    let _ = file_diagnostics(&db, db.file(&key));
    let edited = text.replacen(
        "timeout: 600 }\n    fork f143",
        "timeout: 601 }\n    fork f143",
        1,
    );
    assert_ne!(edited, text);
    let mut recheck = Vec::new();
    for i in 0..20 {
        let t = if i % 2 == 0 {
            edited.clone()
        } else {
            text.clone()
        };
        let start = Instant::now();
        db.set_text(&key, t);
        assert_eq!(file_diagnostics(&db, db.file(&key)).len(), 0);
        recheck.push(start.elapsed());
    }

    let (server, conn) = Connection::memory();
    let handle = std::thread::spawn(move || factory_lsp::serve(&server));
    let init = json!({"processId": null, "rootUri": format!("file://{}", root.display()), "capabilities": {}});
    conn.sender
        .send(Request::new(RequestId::from(1), "initialize".into(), init).into())
        .unwrap();
    let _ = conn.receiver.recv().unwrap();
    let notify = |method: &str, params: Value| {
        conn.sender
            .send(Notification::new(method.into(), params).into())
            .unwrap()
    };
    notify("initialized", json!({}));
    let start = Instant::now();
    notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "fwf", "version": 1, "text": text}}),
    );
    assert_eq!(wait_diagnostics(&conn), 0);
    let open = start.elapsed();

    // One character: `timeout: 600` of a head in the middle becomes 601, then back.
    let mid = format!("agent h{} {{", layers / 2);
    let line = text.lines().position(|l| l.contains(&mid)).unwrap() as u32;
    let col = text
        .lines()
        .nth(line as usize)
        .unwrap()
        .find("600")
        .unwrap() as u32
        + 2;
    let mut edits = Vec::new();
    for version in 2..22 {
        let ch = if version % 2 == 0 { "1" } else { "0" };
        let start = Instant::now();
        notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [
                {"range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": col + 1}}, "text": ch}
            ]}),
        );
        assert_eq!(wait_diagnostics(&conn), 0);
        edits.push(start.elapsed());
    }
    // And a one-character edit inside a comment (the tree does not change).
    let doc_line = line - 1;
    let mut comment_edits = Vec::new();
    for version in 22..42 {
        let ch = if version % 2 == 0 { "X" } else { "H" };
        let start = Instant::now();
        notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [
                {"range": {"start": {"line": doc_line, "character": 8}, "end": {"line": doc_line, "character": 9}}, "text": ch}
            ]}),
        );
        assert_eq!(wait_diagnostics(&conn), 0);
        comment_edits.push(start.elapsed());
    }
    conn.sender
        .send(Request::new(RequestId::from(2), "shutdown".into(), Value::Null).into())
        .unwrap();
    let _ = conn.receiver.recv();
    notify("exit", Value::Null);
    handle.join().unwrap().unwrap();

    println!("nodes: {nodes}, bytes: {}", text.len());
    println!("cold check (median of 5): {:?}", median(cold));
    println!(
        "compiler re-check after the edit (median of 20): {:?}",
        median(recheck)
    );
    println!("didOpen -> diagnostics: {open:?}");
    println!(
        "one-char attribute edit -> diagnostics (median of 20): {:?}",
        median(edits)
    );
    println!(
        "one-char doc-comment edit -> diagnostics (median of 20): {:?}",
        median(comment_edits)
    );
}
