#!/usr/bin/env python3
"""Times the language server as an editor meets it, for docs/performance.md.

usage: scripts/lsp-bench.py [FACTORY] [GEN_LAYERED]
  FACTORY      the factory binary (default target/release/factory)
  GEN_LAYERED  the generator (default target/release/examples/gen_layered; build it with
               cargo build --release -p factory-compiler --features testgen --example gen_layered)

Measures, through `factory lsp` over stdio:
  burst   20 keystrokes 5 ms apart on a 2,000-node file: time from the last keystroke to
          the diagnostics of the last version (median of 10 bursts), and how many
          versions were published per burst;
  edit    one edit, then wait for its diagnostics, on a 2,000-node file (median of 50),
          sent as the whole text;
  keystroke  the same, sent as the one changed character (a range edit: what editors
          send to a server that syncs incrementally, as `factory lsp` does);
  memory  resident memory of the server after 10 and after 1,000 edits of a
          10,000-node file (each edit waits for its diagnostics).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import queue


class Server:
    def __init__(self, factory, root):
        env = dict(os.environ, FACTORY_HOME=os.path.join(root, "home"))
        self.p = subprocess.Popen([factory, "lsp"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, cwd=root, env=env)
        self.q = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 1
        self.request("initialize", {"processId": None, "rootUri": "file://" + root,
                                    "capabilities": {}})
        self.notify("initialized", {})

    def _read(self):
        out = self.p.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            self.q.put((time.perf_counter(), json.loads(out.read(length))))

    def send(self, msg):
        body = json.dumps(dict(msg, jsonrpc="2.0")).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def notify(self, method, params):
        self.send({"method": method, "params": params})

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.send({"id": rid, "method": method, "params": params})
        while True:
            _, m = self.q.get(timeout=600)
            if m.get("id") == rid:
                return m

    def diagnostics(self, uri, version):
        """(arrival time, versions published on the way) for `version`'s diagnostics."""
        seen = []
        while True:
            t, m = self.q.get(timeout=600)
            if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri:
                seen.append(m["params"].get("version"))
                if m["params"].get("version") == version:
                    return t, seen

    def rss_kib(self):
        with open(f"/proc/{self.p.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])

    def stop(self):
        self.request("shutdown", None)
        self.notify("exit", None)
        self.p.wait(timeout=60)


def edit(text, v):
    return text.replace("timeout: 600", "timeout: %d" % (600 + v % 2), 1)


def main():
    factory = sys.argv[1] if len(sys.argv) > 1 else "target/release/factory"
    gen = sys.argv[2] if len(sys.argv) > 2 else "target/release/examples/gen_layered"
    factory, gen = os.path.abspath(factory), os.path.abspath(gen)
    with tempfile.TemporaryDirectory() as root:
        root = os.path.realpath(root)
        for nodes in (2000,):
            text = subprocess.run([gen, str(nodes)], capture_output=True, text=True, check=True).stdout
            path = os.path.join(root, f"l{nodes}.fwf")
            uri = "file://" + path
            with open(path, "w") as f:
                f.write(text)
            s = Server(factory, root)
            s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "fwf", "version": 1, "text": text}})
            s.diagnostics(uri, 1)
            v = 1
            lat, published = [], []
            for _ in range(10):
                for k in range(20):
                    v += 1
                    s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": v},
                                                         "contentChanges": [{"text": edit(text, v)}]})
                    last = time.perf_counter()
                    if k < 19:
                        time.sleep(0.005)
                t, seen = s.diagnostics(uri, v)
                lat.append((t - last) * 1000)
                published.append(len(seen))
            print(f"burst {nodes}: last keystroke -> final diagnostics median {statistics.median(lat):.1f} ms "
                  f"(min {min(lat):.1f}, max {max(lat):.1f}); publications per burst of 20: {published}")
            single = []
            for _ in range(50):
                v += 1
                start = time.perf_counter()
                s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": v},
                                                     "contentChanges": [{"text": edit(text, v)}]})
                t, _ = s.diagnostics(uri, v)
                single.append((t - start) * 1000)
            print(f"edit {nodes}: edit -> diagnostics median {statistics.median(single):.1f} ms over 50 "
                  f"(an edit after a pause is checked at once; the 10 ms debounce applies inside bursts)")
            # What an editor sends for one keystroke when the server syncs incrementally:
            # the one character that changed (the last digit of the first `timeout: 600`).
            # The text must be what the server holds: the full-text edits above left it
            # at `edit(text, v)`.
            current = edit(text, v)
            at = current.index("timeout: 60") + len("timeout: 60")
            line = current.count("\n", 0, at)
            col = at - (current.rindex("\n", 0, at) + 1)
            rng = {"start": {"line": line, "character": col}, "end": {"line": line, "character": col + 1}}
            single = []
            for _ in range(50):
                v += 1
                start = time.perf_counter()
                s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": v},
                                                     "contentChanges": [{"range": rng, "text": str(v % 2)}]})
                t, _ = s.diagnostics(uri, v)
                single.append((t - start) * 1000)
            print(f"keystroke {nodes}: one-character range edit -> diagnostics median "
                  f"{statistics.median(single):.1f} ms over 50")
            s.stop()
        nodes = int(os.environ.get("MEM_NODES", "10000"))
        edits = int(os.environ.get("MEM_EDITS", "1000"))
        text = subprocess.run([gen, str(nodes)], capture_output=True, text=True, check=True).stdout
        path = os.path.join(root, f"m{nodes}.fwf")
        uri = "file://" + path
        with open(path, "w") as f:
            f.write(text)
        s = Server(factory, root)
        s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "fwf", "version": 1, "text": text}})
        s.diagnostics(uri, 1)
        marks = {}
        for v in range(2, edits + 2):
            s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": v},
                                                 "contentChanges": [{"text": edit(text, v)}]})
            s.diagnostics(uri, v)
            if v - 1 in (10, 100, edits // 2, edits):
                marks[v - 1] = s.rss_kib()
        print(f"memory {nodes}: resident KiB after N edits: {marks}")
        s.stop()


if __name__ == "__main__":
    main()
