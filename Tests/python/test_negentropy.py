"""Checks Protocol/vectors/negentropy.json against negentropy_ref.py, the Python implementation of
PROTOCOL.md §2.5.1 to §2.5.7, and that implementation against the worked examples of
Protocol/notes/negentropy-v1-examples.txt (made earlier by another port of the reference C++, and pinned by the
Swift tests too) and against the true set differences of random sets."""

import hashlib
import json
import pathlib
import random

import pytest

import negentropy_ref as ref

ROOT = pathlib.Path(__file__).resolve().parents[2]
VECTORS = json.loads((ROOT / "Protocol/vectors/negentropy.json").read_text())
EXAMPLES = (ROOT / "Protocol/notes/negentropy-v1-examples.txt").read_text()


def example(prefix):
    line = next(line for line in EXAMPLES.splitlines() if line.startswith(prefix))
    return line.split(" ")[-1]


def test_the_vector_file_is_what_the_reference_makes():
    assert ref.render(ref.build()) == (ROOT / "Protocol/vectors/negentropy.json").read_text()


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda case: case["name"])
def test_case_messages(case):
    """Replays a case message by message: each side's answer to the previous message is the next one."""
    limit = VECTORS["frameSizeLimit"]
    messages = [bytes.fromhex(message) for message in case["messages"]]
    initiator = ref.Negentropy(ref.items_of(case["initiator"]), limit)
    assert initiator.initiate() == messages[0], "the initiator's first message"
    have, need = set(), set()
    for index in range(1, len(messages), 2):
        answer, _, _ = ref.Negentropy(ref.items_of(case["responder"]), limit).reconcile(messages[index - 1])
        assert answer == messages[index], f"the responder's answer, message {index}"
        following, more_have, more_need = initiator.reconcile(answer)
        have.update(more_have)
        need.update(more_need)
        if index + 1 < len(messages):
            assert following == messages[index + 1], f"the initiator's message {index + 1}"
        else:
            assert following is None, "the initiator is complete after the last answer"
    assert sorted(item.hex() for item in have) == case["have"]
    assert sorted(item.hex() for item in need) == case["need"]
    # have and need are the true differences of the two sets.
    mine = {item[1] for item in ref.items_of(case["initiator"])}
    theirs = {item[1] for item in ref.items_of(case["responder"])}
    assert set(case["have"]) == {item.hex() for item in mine - theirs}
    assert set(case["need"]) == {item.hex() for item in theirs - mine}
    assert all(len(message) <= limit for message in messages)


def test_vectors_use_millisecond_timestamps_above_2_31():
    for case in VECTORS["cases"]:
        for side in ("initiator", "responder"):
            assert all(created > 2**31 for created, _ in ref.items_of(case[side]))
    assert any(len(message) // 2 > ref.DONGNE_FRAME_SIZE_LIMIT - 200 for case in VECTORS["cases"] for message in case["messages"])


def test_the_generated_items_are_described_in_the_file():
    described = VECTORS["generatedItems"]
    for index in (0, 1, 2, 3, 1999):
        created = described["createdBase"] + described["createdStep"] * (index // described["itemsPerCreated"])
        item_id = hashlib.sha256((described["idText"] + str(index)).encode()).digest()
        assert ref.generated_item(index) == (created, item_id)


def test_fingerprint_and_varint_vectors():
    for vector in VECTORS["fingerprints"]:
        ids = [bytes.fromhex(i) for i in vector.get("ids", [])]
        ids += [item[1] for item in ref.items_of({"generated": vector.get("generated", [])})]
        assert ref.fingerprint(ids).hex() == vector["fingerprint"]
    for vector in VECTORS["varints"]:
        assert ref.varint(vector["value"]).hex() == vector["bytes"]
        assert ref.Reader(bytes.fromhex(vector["bytes"])).varint() == vector["value"]


def test_version_answers_and_failing_messages():
    items = ref.items_of(VECTORS["versions"])
    for vector in VECTORS["versions"]["answers"]:
        assert ref.Negentropy(items).reconcile(bytes.fromhex(vector["message"]))[0].hex() == vector["answer"]
    for vector in VECTORS["failing"]["messages"]:
        with pytest.raises(ref.NegentropyError):
            ref.Negentropy([]).reconcile(bytes.fromhex(vector["message"]))
    initiator = ref.Negentropy([])
    initiator.initiate()
    with pytest.raises(ref.NegentropyError):
        initiator.reconcile(bytes.fromhex("62"))  # an initiator does not downgrade


def test_the_earlier_worked_examples():
    """Protocol/notes/negentropy-v1-examples.txt: timestamps 1000 + i div 2, ids SHA-256 of the single byte i."""
    sha = lambda byte: hashlib.sha256(bytes([byte])).digest()  # noqa: E731
    client = [(1000 + i // 2, sha(i)) for i in range(40)]
    server = [item for i, item in enumerate(client) if i not in (7, 20)] + [(1010, sha(0x80)), (1003, sha(0x81))]
    initiator = ref.Negentropy(client)
    first = initiator.initiate()
    assert first.hex() == example("C->S")
    answer, _, _ = ref.Negentropy(server).reconcile(first)
    assert answer.hex() == example("S->C")
    following, have, need = initiator.reconcile(answer)
    assert following is None
    assert set(have) == {sha(7), sha(20)} and set(need) == {sha(0x80), sha(0x81)}
    assert ref.Negentropy([(12345, b"\xee" * 32)]).reconcile(bytes.fromhex("6100000200"))[0].hex() == (
        "6100000201" + "ee" * 32
    )
    assert ref.Negentropy([]).initiate().hex() == "6100000200"


@pytest.mark.parametrize("limit", [0, 4096, ref.DONGNE_FRAME_SIZE_LIMIT])
def test_random_sets_reconcile_to_their_exact_differences(limit):
    generator = random.Random(limit + 7)
    for _ in range(12):
        mine, theirs = [], []
        for _ in range(generator.randrange(0, 2500)):
            item = (ref.BASE_TIME + generator.randrange(0, 400), generator.randbytes(32))
            side = generator.randrange(10)
            if side == 0:
                mine.append(item)
            elif side == 1:
                theirs.append(item)
            else:
                mine.append(item)
                theirs.append(item)
        messages, have, need = ref.run(mine, theirs, limit)
        assert have == {i for _, i in mine} - {i for _, i in theirs}
        assert need == {i for _, i in theirs} - {i for _, i in mine}
        if limit:
            assert all(len(message) <= limit for message in messages)
