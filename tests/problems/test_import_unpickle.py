"""HardTests' test_cases are a pickle: only plain containers, strings and numbers may load."""

from __future__ import annotations

import base64
import json
import os
import pickle
import zlib

import pytest

from problems.importers import unpickle
from problems.importers.base import RowError
from problems.importers.unpickle import UnsafePickleError, cases_decode, cases_encode, plain_loads

MARKER = "/tmp/hardtests-unpickle-pwned"


class _Reduce:
    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return (self.func, self.args)


class Plain:
    pass


def _encode(value) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(value))).decode()


def test_the_dataset_encoding_round_trips():
    tests = [{"input": "1 2\n", "output": "3\n"}, {"input": "", "output": "ünïcode\n"}]
    assert cases_decode(cases_encode(tests)) == tests
    # A pickle of the list itself (not of its JSON text) is plain data too.
    assert cases_decode(_encode(tests)) == tests


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_plain_containers_strings_and_numbers_load_at_every_protocol(protocol):
    value = {"a": [1, 2.5, None, True], "b": ("x", b"y\xff"), "c": {frozenset({1}), 3}, 4: {"nested": [[]]},
             "d": bytearray(b"z")}
    assert plain_loads(pickle.dumps(value, protocol=protocol)) == value


def test_os_system_reduce_is_refused_and_never_runs():
    if os.path.exists(MARKER):
        os.remove(MARKER)
    payload = _encode([_Reduce(os.system, f"touch {MARKER}")])
    with pytest.raises(UnsafePickleError, match=r"refers to (posix|os)\.system; only plain"):
        cases_decode(payload)
    assert not os.path.exists(MARKER)


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
@pytest.mark.parametrize("value", [
    _Reduce(eval, "1+1"),
    _Reduce(getattr, "abc", "upper"),
    Plain(),
    range(3),
    complex(1, 2),
], ids=["eval", "getattr", "instance", "range", "complex"])
def test_every_global_is_refused(value, protocol):
    with pytest.raises(UnsafePickleError, match="only plain lists, dicts, strings and numbers"):
        plain_loads(pickle.dumps(value, protocol=protocol))


def test_allowed_names_only_build_plain_values():
    # _codecs.encode is allowed for protocol-0 bytes, but only as latin1 text -> bytes.
    with pytest.raises(UnsafePickleError, match="other than latin1"):
        plain_loads(b"c_codecs\nencode\n(Vx\nVrot13\ntR.")
    with pytest.raises(UnsafePickleError, match="builds a set from a str"):
        plain_loads(b"cbuiltins\nset\n(Vabc\ntR.")


def test_hand_built_global_opcode_is_refused():
    # c<module>\n<name>\n pushes a global without any class in the test: the classic exploit shape.
    payload = b"cbuiltins\nexec\n(Vprint('pwned')\ntR."
    with pytest.raises(UnsafePickleError, match="builtins.exec"):
        plain_loads(payload)


def test_truncated_and_corrupt_data_are_row_errors():
    with pytest.raises(RowError, match="not a readable pickle"):
        plain_loads(pickle.dumps([1, 2, 3])[:-3])
    with pytest.raises(RowError, match="not zlib data"):
        cases_decode(base64.b64encode(b"plain").decode())
    with pytest.raises(RowError, match="not valid base64"):
        cases_decode("***")
    with pytest.raises(RowError, match="text that is not JSON"):
        cases_decode(_encode("not json"))


def test_a_small_payload_cannot_expand_without_bound(monkeypatch):
    monkeypatch.setattr(unpickle, "MAX_DECODED_BYTES", 1000)
    bomb = base64.b64encode(zlib.compress(pickle.dumps("x" * 100_000))).decode()
    with pytest.raises(RowError, match="expands beyond 1000 bytes"):
        cases_decode(bomb)


def test_items_must_be_input_output_pairs():
    with pytest.raises(RowError, match=r"test_cases\[1\] must be an object"):
        cases_decode(_encode(json.dumps([{"input": "1", "output": "1"}, {"input": "2"}])))
