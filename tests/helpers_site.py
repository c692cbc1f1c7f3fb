"""A real HTTP site on loopback for `memhooks add` / `refresh` tests (http.server in a thread).

Static pages answer with an ETag and a Last-Modified and honour If-None-Match /
If-Modified-Since with a 304; special routes (redirects, a lazily generated 1 GiB page, a
gzip bomb, a drip-fed page, a hanging page) are handlers. The site counts, per path, the
requests, the requests that carried validators, and the body bytes it actually wrote to
the socket: what the client downloaded, measured by the server.
"""

from __future__ import annotations

import hashlib
import threading
import time
import zlib
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LAST_MODIFIED = "Wed, 01 Jan 2025 00:00:00 GMT"
CHUNK = 64 * 1024


class Site:
    def __init__(self):
        self.pages: dict[str, tuple[bytes, str, bool, str]] = {}  # body, type, etag?, Last-Modified
        self.routes: dict = {}
        self.requests: Counter = Counter()
        self.conditional: Counter = Counter()
        self.served: Counter = Counter()  # body bytes written, per path
        self.lock = threading.Lock()
        self.stop = threading.Event()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                site._get(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # ------------------------------------------------------------------ set-up

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()

    @property
    def root(self) -> str:
        host, port = self.server.server_address[:2]
        assert isinstance(host, str)
        return f"http://{host}:{port}"

    def url(self, path: str) -> str:
        return self.root + path

    def page(self, path: str, body: str | bytes, content_type: str = "text/markdown; charset=utf-8",
             *, etag: bool = True):
        """Serve `body` at `path`; a page given a new body gets a later Last-Modified."""
        data = body.encode() if isinstance(body, str) else body
        old = self.pages.get(path)
        stamp = LAST_MODIFIED
        if old is not None:
            stamp = old[3] if old[0] == data else f"Thu, 0{min(9, int(old[3][5:7]) + 1)} Jan 2025 00:00:00 GMT"
        self.pages[path] = (data, content_type, etag, stamp)

    def route(self, path: str, handler):
        self.routes[path] = handler

    def reset_counts(self):
        with self.lock:
            self.requests.clear()
            self.conditional.clear()
            self.served.clear()

    def total_served(self, paths=None) -> int:
        return sum(n for p, n in self.served.items() if paths is None or p in paths)

    # ------------------------------------------------------------------ serving

    def count(self, path: str, n: int) -> None:
        with self.lock:
            self.served[path] += n

    def write(self, h, path: str, data: bytes) -> bool:
        """Write body bytes, counted; False once the client has gone."""
        try:
            h.wfile.write(data)
            h.wfile.flush()
        except OSError:
            return False
        self.count(path, len(data))
        return True

    def _get(self, h):
        path = h.path
        with self.lock:
            self.requests[path] += 1
            if h.headers.get("If-None-Match") or h.headers.get("If-Modified-Since"):
                self.conditional[path] += 1
        if path in self.routes:
            self.routes[path](self, h)
            return
        if path not in self.pages:
            h.send_response(404)
            h.send_header("Content-Length", "9")
            h.end_headers()
            self.write(h, path, b"not found")
            return
        body, ctype, with_etag, stamp = self.pages[path]
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"' if with_etag else None
        inm, ims = h.headers.get("If-None-Match"), h.headers.get("If-Modified-Since")
        if (inm is not None and inm == etag) or (inm is None and ims == stamp):
            h.send_response(304)
            if etag:
                h.send_header("ETag", etag)
            h.end_headers()
            return
        h.send_response(200)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        if etag:
            h.send_header("ETag", etag)
        h.send_header("Last-Modified", stamp)
        h.end_headers()
        self.write(h, path, body)


# ---------------------------------------------------------------------- hostile routes

def redirect(to: str, status: int = 302):
    def handler(site: Site, h):
        h.send_response(status)
        h.send_header("Location", to)
        h.send_header("Content-Length", "0")
        h.end_headers()
    return handler


def huge(size: int = 1 << 30, content_type: str = "text/plain"):
    """A page of `size` bytes, generated as it is written (never held in memory)."""
    def handler(site: Site, h):
        h.send_response(200)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(size))
        h.end_headers()
        line = b"all work and no play makes a very long page " * 1489 + b"\n"
        block = (line * (CHUNK // len(line) + 1))[:CHUNK]
        left = size
        while left > 0 and not site.stop.is_set():
            part = block[:min(CHUNK, left)]
            if not site.write(h, h.path, part):
                return
            left -= len(part)
    return handler


def gzip_bomb(size: int = 1 << 30):
    """`size` bytes of text, gzip-compressed as they are written (about 1,000 to 1)."""
    def handler(site: Site, h):
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Content-Encoding", "gzip")
        h.end_headers()
        z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        block = b"a" * CHUNK
        for _ in range(size // CHUNK):
            out = z.compress(block)
            if out and not site.write(h, h.path, out):
                return
            if site.stop.is_set():
                return
        site.write(h, h.path, z.flush())
    return handler


def drip(interval_s: float = 0.05, limit_s: float = 120.0):
    """A page sent one byte at a time, forever (or until `limit_s`)."""
    def handler(site: Site, h):
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.end_headers()
        end = time.monotonic() + limit_s
        while time.monotonic() < end and not site.stop.is_set():
            if not site.write(h, h.path, b"x"):
                return
            time.sleep(interval_s)
    return handler


def hang(limit_s: float = 120.0):
    """Headers, then nothing."""
    def handler(site: Site, h):
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Content-Length", "100")
        h.end_headers()
        try:
            h.wfile.flush()
        except OSError:
            return
        site.stop.wait(limit_s)
    return handler


def status(code: int, body: bytes = b"error"):
    def handler(site: Site, h):
        h.send_response(code)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        site.write(h, h.path, body)
    return handler
