"""What clients may hold of the emulator's server: idle and half-sent connections time out, a
body over the limit is refused while it is read, and other clients keep being served."""

from __future__ import annotations

import re
import select
import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest

from quota_constructs.local.testing import SEED_DEMO, EmulatorServer
from quota_constructs.local.wire.server import ServerLimits

FAST_TIMEOUT = ServerLimits(channel_timeout=1, cleanup_interval=1, connection_limit=100)
"""Waitress's own connection limit, and connections dropped after a second of silence."""
SMALL_BODY = ServerLimits(max_body_bytes=64 * 1024)
GENEROUS_S = 60.0
"""How long a well-behaved client waits for its answer (no test measures time)."""
HALF_SENT = b"POST /v1/describejobqueues HTTP/1.1\r\nHost: emulator\r\nContent-Le"


def queue_names(emu: EmulatorServer) -> list[str]:
    """The job queues a well-behaved client (boto3, generous timeouts, no retries) sees."""
    batch = emu.client(
        "batch",
        connect_timeout=GENEROUS_S,
        read_timeout=GENEROUS_S,
        retries={"total_max_attempts": 1},
    )
    return [q["jobQueueName"] for q in batch.describe_job_queues()["jobQueues"]]


@contextmanager
def half_sent_requests(emu: EmulatorServer, count: int) -> Iterator[list[socket.socket]]:
    """``count`` connections that each send the start of a request and then nothing."""
    with ExitStack() as stack:
        sockets = []
        for _ in range(count):
            sock = stack.enter_context(socket.create_connection((emu.host, emu_port(emu))))
            sock.sendall(HALF_SENT)
            sockets.append(sock)
        yield sockets


def emu_port(emu: EmulatorServer) -> int:
    return int(emu.endpoint_url.rsplit(":", 1)[1])


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed ``sock`` (end of stream) within the generous wait."""
    sock.settimeout(GENEROUS_S)
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True


def test_half_sent_requests_beyond_the_connection_limit_do_not_lock_clients_out() -> None:
    with (
        EmulatorServer(org_files=[SEED_DEMO], limits=FAST_TIMEOUT) as emu,
        half_sent_requests(emu, 120) as stalled,
    ):
        assert queue_names(emu) == ["seed-demo-queue"]
        assert closed_by_server(stalled[0])


def test_half_sent_requests_within_the_default_limit_leave_room_for_clients() -> None:
    with (
        EmulatorServer(org_files=[SEED_DEMO]) as emu,
        half_sent_requests(emu, 120),
    ):
        assert queue_names(emu) == ["seed-demo-queue"]


def test_closes_an_idle_connection_after_the_timeout() -> None:
    with (
        EmulatorServer(org_files=[SEED_DEMO], limits=FAST_TIMEOUT) as emu,
        socket.create_connection((emu.host, emu_port(emu))) as idle,
    ):
        assert closed_by_server(idle)


def response_status(sock: socket.socket) -> int:
    """The status code of the response the server sends on ``sock`` (before closing it)."""
    sock.settimeout(GENEROUS_S)
    data = b""
    try:
        while b"\r\n" not in data and (chunk := sock.recv(4096)):
            data += chunk
    except ConnectionResetError:
        pass
    return int(data.split(b" ", 2)[1])


def test_refuses_a_declared_huge_body_before_reading_any_of_it() -> None:
    header = (
        b"POST /v1/submitservicejob HTTP/1.1\r\nHost: emulator\r\n"
        b"Content-Type: application/json\r\nContent-Length: 300000000\r\n\r\n"
    )
    with (
        EmulatorServer(org_files=[SEED_DEMO], limits=SMALL_BODY) as emu,
        socket.create_connection((emu.host, emu_port(emu))) as sock,
    ):
        sock.sendall(header)

        assert response_status(sock) == 413
        assert emu.bytes_received == len(header)
        assert queue_names(emu) == ["seed-demo-queue"]


def stream_chunks(sock: socket.socket, *, chunk: bytes, total: int) -> int:
    """Send ``chunk`` as HTTP chunks until ``total`` bytes went or the server answers; returns
    the bytes sent."""
    frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    pending, sent = b"", 0
    sock.setblocking(False)
    while sent < total:
        readable, writable, _ = select.select([sock], [sock], [], GENEROUS_S)
        if readable or not writable:
            break
        pending = pending or frame
        try:
            count = sock.send(pending)
        except (BrokenPipeError, ConnectionResetError):
            break
        pending, sent = pending[count:], sent + count
    sock.setblocking(True)
    return sent


def test_refuses_a_chunked_body_once_it_passes_the_limit() -> None:
    limit = SMALL_BODY.max_body_bytes
    with (
        EmulatorServer(org_files=[SEED_DEMO], limits=SMALL_BODY) as emu,
        socket.create_connection((emu.host, emu_port(emu))) as sock,
    ):
        sock.sendall(
            b"POST /v1/submitservicejob HTTP/1.1\r\nHost: emulator\r\n"
            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        sent = stream_chunks(sock, chunk=b"x" * 16384, total=256 * 1024 * 1024)

        assert response_status(sock) == 413
        assert sent < 256 * 1024 * 1024
        # read no further than the limit and the last 8 KiB read (waitress's recv size)
        assert emu.bytes_received <= limit + 8192 + 1024
        assert queue_names(emu) == ["seed-demo-queue"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("channel_timeout", 0),
        ("request_deadline", 0),
        ("connections_per_peer", 0),
        ("cleanup_interval", -1),
        ("connection_limit", 0),
        ("max_body_bytes", 10),
        ("max_header_bytes", True),
    ],
)
def test_rejects_limits_out_of_range(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"{field} must be a whole number >= "):
        ServerLimits(**{field: value})  # type: ignore[arg-type]


def test_refuses_headers_over_the_limit() -> None:
    header = (
        b"GET /_quota/health HTTP/1.1\r\nHost: emulator\r\nX-Big: " + b"x" * 70_000 + b"\r\n\r\n"
    )
    with (
        EmulatorServer(org_files=[SEED_DEMO]) as emu,
        socket.create_connection((emu.host, emu_port(emu))) as sock,
    ):
        sock.sendall(header)

        assert response_status(sock) == 431
        assert queue_names(emu) == ["seed-demo-queue"]


DEADLINE = ServerLimits(request_deadline=1, cleanup_interval=1)
"""A request must arrive whole within a second (the idle time-out stays 30 s)."""
SLOW_REQUEST = (
    b"POST /v1/describejobqueues HTTP/1.1\r\nHost: localhost\r\n"
    b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
)


def send_slowly(sock: socket.socket, data: bytes, pause_s: float) -> tuple[int, bytes]:
    """Send ``data`` a byte at a time, ``pause_s`` apart, until it is all sent or the server
    answers or closes; returns the bytes sent and what the server sent back."""
    for sent in range(len(data)):
        try:
            sock.sendall(data[sent : sent + 1])
        except (BrokenPipeError, ConnectionResetError):
            return sent, b""
        readable, _, _ = select.select([sock], [], [], pause_s)
        if readable:
            try:
                return sent + 1, sock.recv(4096)
            except ConnectionResetError:
                return sent + 1, b""
    return len(data), b""


def test_cuts_off_a_client_sending_its_request_byte_by_byte() -> None:
    with (
        EmulatorServer(org_files=[SEED_DEMO], limits=DEADLINE) as emu,
        socket.create_connection((emu.host, emu_port(emu))) as slow,
    ):
        sent, answer = send_slowly(slow, SLOW_REQUEST, pause_s=0.25)

        assert sent < len(SLOW_REQUEST)
        assert answer == b"" or answer.startswith(b"HTTP/1.1 408 ")
        assert queue_names(emu) == ["seed-demo-queue"]


def test_a_request_sent_at_once_is_answered_within_the_deadline() -> None:
    with (
        EmulatorServer(org_files=[SEED_DEMO], limits=DEADLINE) as emu,
        socket.create_connection((emu.host, emu_port(emu))) as sock,
    ):
        sock.sendall(SLOW_REQUEST)

        assert response_status(sock) == 200


PER_PEER = ServerLimits(connections_per_peer=2)
HEALTH = b"GET /_quota/health HTTP/1.1\r\nHost: localhost\r\n\r\n"


def answer(sock: socket.socket) -> bytes:
    """One whole response on ``sock`` (headers and body), or what came before a close."""
    sock.settimeout(GENEROUS_S)
    data = b""
    try:
        while not _complete(data) and (chunk := sock.recv(4096)):
            data += chunk
    except ConnectionResetError:
        pass
    return data


def _complete(data: bytes) -> bool:
    """Whether ``data`` holds a response's headers and all of the body they announce."""
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    return len(body) >= (int(length.group(1)) if length else 0)


def test_refuses_a_connection_beyond_the_per_peer_cap() -> None:
    with (
        EmulatorServer(org_files=[SEED_DEMO], limits=PER_PEER) as emu,
        socket.create_connection((emu.host, emu_port(emu))) as first,
        socket.create_connection((emu.host, emu_port(emu))) as second,
    ):
        for sock in (first, second):  # both accepted and answered, and kept open
            sock.sendall(HEALTH)
            assert answer(sock).startswith(b"HTTP/1.1 200 ")
        with socket.create_connection((emu.host, emu_port(emu))) as third:
            refused = answer(third)
            closed = closed_by_server(third)

        first.sendall(HEALTH)
        assert refused.startswith(b"HTTP/1.1 503 ")
        assert b"x-amzn-ErrorType: TooManyConnectionsException" in refused
        assert closed
        assert answer(first).startswith(b"HTTP/1.1 200 ")
