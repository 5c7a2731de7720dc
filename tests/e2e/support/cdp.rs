//! A small client of the Chrome DevTools Protocol over a websocket, for tests that
//! drive a real headless Chromium (Debian's `chromium`): launch, open a page, evaluate
//! JavaScript in it, take screenshots.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

pub struct Browser {
    child: Child,
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    _profile: tempfile::TempDir,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The Chromium binary: `chromium` (Debian) or `chromium-browser`.
pub fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|b| {
        Command::new(b)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

impl Browser {
    /// Starts headless Chromium and connects to its DevTools endpoint.
    pub fn launch() -> Browser {
        let bin = chromium().expect(
            "the dashboard's browser test needs Chromium: `apt-get install chromium` (.ci/run installs it)",
        );
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(bin)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--hide-scrollbars",
                "--remote-debugging-port=0",
                "--window-size=1280,900",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromium starts");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let url = loop {
            let line = lines
                .next()
                .expect("chromium printed its DevTools URL before exiting")
                .unwrap();
            if let Some(u) = line.strip_prefix("DevTools listening on ") {
                break u.trim().to_string();
            }
        };
        // Keep draining stderr so Chromium never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        let (ws, _) = tungstenite::connect(url.as_str()).expect("the DevTools websocket");
        Browser {
            child,
            ws,
            next_id: 0,
            _profile: profile,
        }
    }

    /// Sends `method` and waits for its answer (events in between are ignored).
    pub fn call(&mut self, method: &str, params: Value, session: Option<&str>) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        self.ws.send(Message::text(msg.to_string())).unwrap();
        loop {
            let Message::Text(text) = self.ws.read().unwrap() else {
                continue;
            };
            let v: Value = serde_json::from_str(&text).unwrap();
            if v["id"] == json!(id) {
                assert!(v.get("error").is_none(), "{method} failed: {v}");
                return v["result"].clone();
            }
        }
    }

    /// A new tab showing `url`.
    pub fn open(&mut self, url: &str) -> String {
        let target = self.call("Target.createTarget", json!({"url": "about:blank"}), None);
        let attached = self.call(
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
            None,
        );
        let session = attached["sessionId"].as_str().unwrap().to_string();
        self.call("Page.enable", json!({}), Some(&session));
        self.navigate(&session, url);
        session
    }

    /// Loads `url` in the tab and waits until the document has loaded.
    pub fn navigate(&mut self, session: &str, url: &str) {
        self.call("Page.navigate", json!({"url": url}), Some(session));
        self.wait_for(
            session,
            "document.readyState === 'complete' && location.href !== 'about:blank'",
            30,
        );
    }

    /// The value of `expression` in the tab.
    pub fn eval(&mut self, session: &str, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
            Some(session),
        );
        r["result"]["value"].clone()
    }

    /// Waits (asking every 100 ms, at most `secs`) until `expression` is true.
    pub fn wait_for(&mut self, session: &str, expression: &str, secs: u64) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(secs) {
            if self.eval(session, expression) == json!(true) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }

    /// Saves a PNG of the whole page (up to 3000 px tall) at `path`.
    pub fn screenshot(&mut self, session: &str, path: &Path) {
        let metrics = self.call("Page.getLayoutMetrics", json!({}), Some(session));
        let size = &metrics["cssContentSize"];
        let width = size["width"]
            .as_f64()
            .unwrap_or(1280.0)
            .clamp(800.0, 1400.0);
        let height = size["height"]
            .as_f64()
            .unwrap_or(900.0)
            .clamp(300.0, 3000.0);
        let shot = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true,
                   "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}}),
            Some(session),
        );
        let png = data_encoding::BASE64
            .decode(shot["data"].as_str().unwrap().as_bytes())
            .unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, png).unwrap();
    }
}
