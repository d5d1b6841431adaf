#!/usr/bin/python3
"""A git server over HTTP for the credential helper's tests: `git http-backend` behind HTTP Basic auth.

Usage: git-http-server.py PROJECT_ROOT USER PASSWORD

Listens on 127.0.0.1 (a port the kernel picks), prints "listening on PORT" once it does, and answers every
request without the right Authorization header with 401 and a WWW-Authenticate challenge, so git asks its
credential helpers. Authenticated requests run `git http-backend` as CGI (push allowed: REMOTE_USER is
set). Each request is logged as "METHOD PATH STATUS" on standard output before it is answered, so a test that
reads the log after git ends finds every line. Stopped by its pid.
"""
import base64
import http.server
import os
import subprocess
import sys

ROOT, USER, PASSWORD = sys.argv[1], sys.argv[2], sys.argv[3]
EXPECTED = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, format, *args):
        pass

    def log(self, status):
        print(f"{self.command} {self.path} {status}", flush=True)

    def serve(self):
        if self.headers.get("Authorization") != EXPECTED:
            self.log(401)  # logged before the answer: a client that has its answer finds the line written
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="latchkey test"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        environment = {
            "PATH": "/usr/bin:/bin", "GIT_PROJECT_ROOT": ROOT, "GIT_HTTP_EXPORT_ALL": "1", "GIT_CONFIG_NOSYSTEM": "1",
            "HOME": ROOT, "REQUEST_METHOD": self.command, "PATH_INFO": path, "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": USER, "REMOTE_ADDR": "127.0.0.1", "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PROTOCOL": "HTTP/1.0",
        }
        if self.headers.get("Content-Encoding"):
            environment["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            environment["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        result = subprocess.run(["/usr/lib/git-core/git-http-backend"], input=body, env=environment,
                                capture_output=True, timeout=60)
        head, _, content = result.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, content = result.stdout.partition(b"\n\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.log(status)  # before the answer, as above
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    do_GET = serve
    do_POST = serve


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"listening on {server.server_address[1]}", flush=True)
server.serve_forever()
