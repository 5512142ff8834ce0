"""ASGI middleware refusing request bodies over the size limit with 413, before they are parsed.

A request announcing its size (``Content-Length``) is refused at once when it is too large; one
sent in chunks is read up to the limit and refused when it goes past it. The body the application
then reads is never larger than the limit. (The texts a request holds are checked again after
parsing, in ``inputs``, since an ``.onnx`` graph's text is not the size of its bytes.)
"""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None:
            if not length.isdigit():
                await JSONResponse({"error": "Content-Length is not a number"}, 400)(scope, receive, send)
            elif int(length) > self.max_bytes:
                await self._too_large(f"{int(length)} bytes", scope, receive, send)
            else:
                await self.app(scope, receive, send)
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
            if size > self.max_bytes:
                await self._too_large(f"more than {self.max_bytes} bytes", scope, receive, send)
                return
        await self.app(scope, _replay(b"".join(chunks), receive), send)

    async def _too_large(self, size: str, scope: Scope, receive: Receive, send: Send) -> None:
        message = f"request body of {size} is over the limit of {self.max_bytes} bytes (--max-request-bytes)"
        await JSONResponse({"error": message}, 413)(scope, receive, send)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` giving ``body`` as one message, then whatever the client sends next (a disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay
