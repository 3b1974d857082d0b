//! A headless Chromium driven through the DevTools protocol: launched with
//! `--remote-debugging-port=0`, one page attached (`Target.attachToTarget`, flat sessions)
//! over the browser's WebSocket, and the few commands a page test needs: navigate and wait for
//! the load, evaluate JavaScript, click at an element's centre with real mouse events, take a
//! screenshot. Every console message, uncaught exception, log entry and network request is
//! kept, so that a test can assert there were no errors and no network.
//!
//! The browser is Debian's `chromium` (`scripts/setup.sh` installs it), or `$CHROMIUM`.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tungstenite::{Message, WebSocket};

/// How long any one step may take.
const TIMEOUT: Duration = Duration::from_secs(60);

/// The browser: `$CHROMIUM`, else the first of `chromium`, `chromium-browser`,
/// `google-chrome` on `PATH`.
pub fn find_browser() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Ok(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    Err(
        "no chromium on PATH: scripts/setup.sh installs Debian's (apt-get install chromium), \
         or set CHROMIUM to a Chrome or Chromium binary"
            .into(),
    )
}

/// Something the page said or did that a test may object to.
#[derive(Debug, Clone)]
pub enum Event {
    /// `console.error` (and `console.assert` failures).
    ConsoleError(String),
    /// An exception no script caught.
    Exception(String),
    /// A browser log entry of level error (a failed load, a blocked resource).
    LogError(String),
    /// Any request the page made, by URL.
    Request(String),
}

pub struct Browser {
    child: Child,
    ws: WebSocket<TcpStream>,
    session: String,
    next_id: u64,
    pub events: Vec<Event>,
    _profile: TempDir,
}

/// A directory removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.ws.close(None);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    /// Starts the browser headless with a fresh profile under `scratch` and a page of
    /// `width`×`height` CSS pixels.
    pub fn launch(scratch: &Path, width: u32, height: u32) -> Result<Browser, String> {
        let exe = find_browser()?;
        let profile = scratch.join(format!("chromium-profile-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&profile);
        std::fs::create_dir_all(&profile).map_err(|e| e.to_string())?;
        let mut child = Command::new(&exe)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--hide-scrollbars",
                "--mute-audio",
                "--remote-debugging-port=0",
                &format!("--window-size={width},{height}"),
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting {}: {e}", exe.display()))?;
        // "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/ID" on stderr.
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("ws://")
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(line[at..].trim().to_string());
                }
            }
        });
        let url = match rx.recv_timeout(TIMEOUT) {
            Ok(url) => url,
            Err(_) => {
                let _ = child.kill();
                return Err(format!("{} printed no DevTools address", exe.display()));
            }
        };
        let hostport = url
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .unwrap_or("")
            .to_string();
        let stream = TcpStream::connect(&hostport).map_err(|e| format!("{hostport}: {e}"))?;
        stream
            .set_read_timeout(Some(TIMEOUT))
            .map_err(|e| e.to_string())?;
        let (ws, _) = tungstenite::client(url.as_str(), stream).map_err(|e| e.to_string())?;
        let mut b = Browser {
            child,
            ws,
            session: String::new(),
            next_id: 0,
            events: Vec::new(),
            _profile: TempDir(profile),
        };
        let target = b.browser_call("Target.createTarget", json!({ "url": "about:blank" }))?;
        let target_id = target["targetId"].as_str().unwrap_or("").to_string();
        let attached = b.browser_call(
            "Target.attachToTarget",
            json!({ "targetId": target_id, "flatten": true }),
        )?;
        b.session = attached["sessionId"]
            .as_str()
            .ok_or("no session id")?
            .to_string();
        for domain in ["Page", "Runtime", "Log", "Network"] {
            b.call(&format!("{domain}.enable"), json!({}))?;
        }
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false }),
        )?;
        Ok(b)
    }

    fn send(&mut self, session: Option<&str>, method: &str, params: Value) -> Result<u64, String> {
        self.next_id += 1;
        let mut msg = json!({ "id": self.next_id, "method": method, "params": params });
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        self.ws
            .send(Message::text(msg.to_string()))
            .map_err(|e| format!("{method}: {e}"))?;
        Ok(self.next_id)
    }

    /// Reads messages until the reply to `id` (events on the way are kept).
    fn reply(&mut self, id: u64, method: &str) -> Result<Value, String> {
        let start = Instant::now();
        loop {
            if start.elapsed() > TIMEOUT {
                return Err(format!("{method}: no reply in {TIMEOUT:?}"));
            }
            let v = self.read()?;
            if v["id"].as_u64() == Some(id) {
                if let Some(e) = v.get("error") {
                    return Err(format!("{method}: {e}"));
                }
                return Ok(v["result"].clone());
            }
        }
    }

    fn read(&mut self) -> Result<Value, String> {
        loop {
            let msg = self
                .ws
                .read()
                .map_err(|e| format!("reading DevTools: {e}"))?;
            let Message::Text(text) = msg else { continue };
            let v: Value = serde_json::from_str(text.as_str()).map_err(|e| e.to_string())?;
            self.keep(&v);
            return Ok(v);
        }
    }

    fn keep(&mut self, v: &Value) {
        let p = &v["params"];
        let event = match v["method"].as_str() {
            Some("Runtime.consoleAPICalled")
                if matches!(p["type"].as_str(), Some("error" | "assert")) =>
            {
                let args: Vec<String> = p["args"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|a| {
                        a["value"]
                            .as_str()
                            .map_or_else(|| a.to_string(), str::to_string)
                    })
                    .collect();
                Event::ConsoleError(args.join(" "))
            }
            Some("Runtime.exceptionThrown") => {
                let d = &p["exceptionDetails"];
                Event::Exception(format!(
                    "{} {}",
                    d["text"].as_str().unwrap_or(""),
                    d["exception"]["description"].as_str().unwrap_or("")
                ))
            }
            Some("Log.entryAdded") if p["entry"]["level"] == "error" => Event::LogError(format!(
                "{} {}",
                p["entry"]["text"].as_str().unwrap_or(""),
                p["entry"]["url"].as_str().unwrap_or("")
            )),
            Some("Network.requestWillBeSent") => {
                Event::Request(p["request"]["url"].as_str().unwrap_or("").to_string())
            }
            _ => return,
        };
        self.events.push(event);
    }

    fn browser_call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.send(None, method, params)?;
        self.reply(id, method)
    }

    /// A command to the page's session.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let session = self.session.clone();
        let id = self.send(Some(&session), method, params)?;
        self.reply(id, method)
    }

    /// Opens `url` and waits for its load event (a late one of the page before does not
    /// count: the document must be `url`'s, complete).
    pub fn navigate(&mut self, url: &str) -> Result<(), String> {
        self.events.clear();
        self.call("Page.navigate", json!({ "url": url }))?;
        let start = Instant::now();
        loop {
            if start.elapsed() > TIMEOUT {
                return Err(format!("{url}: not loaded in {TIMEOUT:?}"));
            }
            let v = self.read()?;
            if v["method"] == "Page.loadEventFired" {
                let state = self.eval("[location.href, document.readyState]")?;
                if state[0] == url && state[1] == "complete" {
                    return Ok(());
                }
            }
        }
    }

    /// The value of a JavaScript expression (awaited when it is a promise).
    pub fn eval(&mut self, expression: &str) -> Result<Value, String> {
        let r = self.call(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
        )?;
        if let Some(e) = r.get("exceptionDetails") {
            return Err(format!("{expression}: {e}"));
        }
        Ok(r["result"]["value"].clone())
    }

    /// Scrolls the element `selector` matches into view and clicks its centre with the
    /// mouse (pressed, released), as a person would.
    pub fn click(&mut self, selector: &str) -> Result<(), String> {
        let rect = self.eval(&format!(
            "(() => {{ const e = document.querySelector({s}); if (!e) return null; \
             e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); \
             return [r.left + Math.min(r.width / 2, 40), r.top + r.height / 2]; }})()",
            s = json!(selector)
        ))?;
        let (Some(x), Some(y)) = (rect[0].as_f64(), rect[1].as_f64()) else {
            return Err(format!("nothing matches {selector}"));
        };
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 }),
            )?;
        }
        Ok(())
    }

    /// A WebP of the page as shown (lossy at quality 75: a page of text stays legible at half
    /// the PNG's bytes).
    pub fn screenshot(&mut self) -> Result<Vec<u8>, String> {
        let r = self.call(
            "Page.captureScreenshot",
            json!({ "format": "webp", "quality": 75 }),
        )?;
        let data = r["data"].as_str().ok_or("no screenshot data")?;
        data_encoding::BASE64
            .decode(data.as_bytes())
            .map_err(|e| e.to_string())
    }

    /// Console errors, exceptions and error log entries so far, as `console.error: boom`.
    pub fn errors(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::ConsoleError(t) => Some(format!("console.error: {t}")),
                Event::Exception(t) => Some(format!("exception: {t}")),
                Event::LogError(t) => Some(format!("log: {t}")),
                Event::Request(_) => None,
            })
            .collect()
    }

    /// Requests for anything but the page's own file and inline data.
    pub fn network(&self) -> Vec<&str> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Request(u) if !(u.starts_with("file:") || u.starts_with("data:")) => {
                    Some(u.as_str())
                }
                _ => None,
            })
            .collect()
    }
}
