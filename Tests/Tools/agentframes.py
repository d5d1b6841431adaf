"""The agent protocol's framing, for the attack scripts in this directory (exec-race.py,
namespace-forgery.py): a 4-byte big-endian length, then "LK", the version, the id, the operation code."""
import struct


def field(data):
    """A length-prefixed field (little-endian length)."""
    return struct.pack("<I", len(data)) + data


def request(version, identifier, code, body):
    return b"LK" + bytes([version]) + struct.pack("<I", identifier) + bytes([code]) + body


def read_frame(connection):
    """The next frame's message, or None when the connection ends (or is reset: the agent closed it)."""
    try:
        header = b""
        while len(header) < 4:
            chunk = connection.recv(4 - len(header))
            if not chunk:
                return None
            header += chunk
        length = struct.unpack(">I", header)[0]
        body = b""
        while len(body) < length:
            chunk = connection.recv(length - len(body))
            if not chunk:
                return None
            body += chunk
        return body
    except OSError:
        return None
