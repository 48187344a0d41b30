#!/usr/bin/env python3
"""A fake Hugging Face Hub on 127.0.0.1 for kvplan's resolution tests.

Serves repos from --root: ROOT/ORG/NAME/<files>. It answers the requests
kvplan's Hub client makes, the way the Hub does:

  GET /ORG/NAME/resolve/REV/config.json        200 + X-Repo-Commit
  GET /ORG/NAME/resolve/REV/*.safetensors      302 to /cdn/ORG/NAME/FILE (as the
                                               Hub sends LFS files to its CDN)
  GET /cdn/ORG/NAME/FILE                       200, or 206 for a Range request
  GET /api/models/ORG/NAME/revision/REV        {"sha": COMMIT}
  anything missing                             404

A marker file in a repo's folder changes how it answers (the failures the
client must turn into one error line):
  .gated     401 unless "Authorization: Bearer good-token"
  .truncate  config.json announces more bytes than it sends, then closes
  .stall     sends the headers of config.json, then nothing for 60 s
  .nocommit  no X-Repo-Commit header (the client asks /api/models)
  .norange   ignores Range and sends whole files
  .loop      config.json redirects to itself
  .error500  every request answers 500

Every request line is appended to --log. The chosen port is written to
--port-file once listening. The server exits after --lifetime seconds.
Test use only; it binds 127.0.0.1 and reaches nothing else.
"""
import argparse
import hashlib
import http.server
import json
import os
import re
import sys
import threading
import time


def commit_of(org, name):
    return hashlib.sha1(f"{org}/{name}".encode()).hexdigest()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    root = "."
    log_path = None

    def log_message(self, fmt, *args):
        pass

    def record(self):
        if self.log_path:
            with open(self.log_path, "a") as f:
                f.write(f"{self.command} {self.path} range={self.headers.get('Range', '')}\n")

    def send_body(self, status, body, headers=None, content_length=None):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body) if content_length is None else content_length))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def not_found(self):
        self.send_body(404, b'{"error":"Entry not found"}', {"Content-Type": "application/json"})

    def marker(self, org, name, what):
        return os.path.exists(os.path.join(self.root, org, name, "." + what))

    def do_GET(self):
        self.record()
        m = re.fullmatch(r"/api/models/([^/]+)/([^/]+)/revision/([^/]+)", self.path)
        if m:
            org, name, _ = m.groups()
            if not os.path.isdir(os.path.join(self.root, org, name)):
                return self.not_found()
            return self.send_body(200, json.dumps({"sha": commit_of(org, name)}).encode())
        m = re.fullmatch(r"/([^/]+)/([^/]+)/resolve/([^/]+)/([^/]+)", self.path)
        if m:
            return self.resolve(*m.groups())
        m = re.fullmatch(r"/cdn/([^/]+)/([^/]+)/([^/]+)", self.path)
        if m:
            return self.serve_file(*m.groups())
        return self.not_found()

    def resolve(self, org, name, rev, file):
        folder = os.path.join(self.root, org, name)
        if not os.path.isdir(folder):
            return self.not_found()
        if self.marker(org, name, "error500"):
            return self.send_body(500, b"internal error")
        if self.marker(org, name, "gated"):
            if self.headers.get("Authorization") != "Bearer good-token":
                return self.send_body(401, b'{"error":"Access to this model is restricted"}')
        if self.marker(org, name, "loop"):
            self.send_response(302)
            self.send_header("Location", self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        commit = commit_of(org, name)
        headers = {} if self.marker(org, name, "nocommit") else {"X-Repo-Commit": commit}
        if file.endswith(".safetensors"):
            if not os.path.exists(os.path.join(folder, file)):
                return self.not_found()
            self.send_response(302)
            self.send_header("Location", f"/cdn/{org}/{name}/{file}")
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path = os.path.join(folder, file)
        if not os.path.isfile(path):
            return self.not_found()
        body = open(path, "rb").read()
        if file == "config.json" and self.marker(org, name, "truncate"):
            self.send_body(200, body[: len(body) // 2], headers, content_length=len(body))
            self.close_connection = True
            return
        if file == "config.json" and self.marker(org, name, "stall"):
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.flush()
            time.sleep(60)
            return
        return self.send_body(200, body, headers)

    def serve_file(self, org, name, file):
        path = os.path.join(self.root, org, name, file)
        if not os.path.isfile(path):
            return self.not_found()
        data = open(path, "rb").read()
        rng = self.headers.get("Range")
        m = re.fullmatch(r"bytes=(\d+)-(\d+)", rng or "")
        if not m or self.marker(org, name, "norange"):
            return self.send_body(200, data)
        first, last = int(m.group(1)), min(int(m.group(2)), len(data) - 1)
        if first >= len(data):
            return self.send_body(416, b"")
        part = data[first : last + 1]
        return self.send_body(206, part, {"Content-Range": f"bytes {first}-{last}/{len(data)}"})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--log")
    p.add_argument("--lifetime", type=float, default=300)
    a = p.parse_args()
    Handler.root = a.root
    Handler.log_path = a.log
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, a.port_file)
    threading.Timer(a.lifetime, lambda: os._exit(0)).start()
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
