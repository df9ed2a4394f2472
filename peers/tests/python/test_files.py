"""Files (an `outcome: true` binding: decline/cancel reach the tool body) through the Python SDK
client, in every cell. Every test starts a fresh server, so the folders start as in the seed."""

import pytest
from conftest import CELLS, EXPECTED_TOOLS, Script, connect, run

PROJECT_QUESTION = (
    "form",
    "/tmp/project has 2 file(s). Delete anyway?",
    {
        "description": "The user's confirmation.",
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
    },
)
cells = pytest.mark.parametrize("transport,era", CELLS)


@cells
def test_tools_list_is_exact(transport, era):
    async def body():
        async with connect("files", transport, era, Script()) as s:
            assert await s.tools() == EXPECTED_TOOLS["files"]
    run(body())


@cells
def test_empty_folder_is_deleted_without_a_question(transport, era):
    async def body():
        script = Script()
        async with connect("files", transport, era, script) as s:
            assert await s.text("delete_folder", {"path": "/tmp/empty"}) == "deleted /tmp/empty"
        assert script.asked == []
    run(body())


@pytest.mark.needs_mrtr
@cells
def test_accepted_ok_deletes(transport, era):
    async def body():
        script = Script().accept({"ok": True})
        async with connect("files", transport, era, script) as s:
            assert await s.text("delete_folder", {"path": "/tmp/project"}) == "deleted /tmp/project"
            assert script.asked == [PROJECT_QUESTION]
            # The folder is gone now: nothing to confirm the second time.
            assert await s.text("delete_folder", {"path": "/tmp/project"}) == "deleted /tmp/project"
        assert script.asked == [PROJECT_QUESTION]
    run(body())


@pytest.mark.needs_mrtr
@cells
def test_accepted_not_ok_keeps(transport, era):
    async def body():
        script = Script().accept({"ok": False})
        async with connect("files", transport, era, script) as s:
            assert await s.text("delete_folder", {"path": "/tmp/project"}) == "kept the folder"
        assert script.asked == [PROJECT_QUESTION]
    run(body())


@pytest.mark.needs_mrtr
@cells
def test_declined(transport, era):
    async def body():
        script = Script().answer("decline")
        async with connect("files", transport, era, script) as s:
            assert await s.text("delete_folder", {"path": "/tmp/project"}) == "declined: folder not deleted"
        assert script.asked == [PROJECT_QUESTION]
    run(body())


@pytest.mark.needs_mrtr
@cells
def test_cancelled(transport, era):
    async def body():
        script = Script().answer("cancel")
        async with connect("files", transport, era, script) as s:
            assert await s.text("delete_folder", {"path": "/tmp/project"}) == "cancelled: folder not deleted"
        assert script.asked == [PROJECT_QUESTION]
    run(body())


@pytest.mark.needs_mrtr
@cells
def test_no_elicitation_capability(transport, era):
    async def body():
        script = Script()
        async with connect("files", transport, era, script, capabilities=False) as s:
            assert await s.protocol_error("delete_folder", {"path": "/tmp/project"}) == (
                -32021,
                "Client did not declare the form elicitation capability required by resolver 'confirm_delete'",
                {"requiredCapabilities": {"elicitation": {"form": {}}}},
            )
            assert await s.text("delete_folder", {"path": "/tmp/empty"}) == "deleted /tmp/empty"
        assert script.asked == []
    run(body())


PROJECT_ENTRIES = [
    {"name": "main.py", "modified": "2026-03-01T09:30:00+09:00"},
    {"name": "README.md", "modified": "2026-02-27T18:00:00-05:00"},
]


@cells
def test_a_non_object_output_with_defs_is_accepted_by_the_client(transport, era):
    """`list_folder` returns an array of `$defs` objects: the client validates the structured
    result against the advertised outputSchema (whose `$ref` must resolve at its root) and
    accepts it."""
    async def body():
        async with connect("files", transport, era, Script()) as s:
            r = await s.call("list_folder", {"path": "/tmp/project"})
            assert r.is_error is False, r
            assert r.structured_content == {"result": PROJECT_ENTRIES}, r
            r = await s.call("list_folder", {"path": "/tmp/project", "modified_since": "2026-03-01T00:30:00Z"})
            assert r.is_error is False, r
            assert r.structured_content == {"result": PROJECT_ENTRIES[:1]}, r
    run(body())


@cells
def test_an_invalid_date_time_is_refused_by_its_format(transport, era):
    async def body():
        async with connect("files", transport, era, Script()) as s:
            assert await s.error_text("list_folder", {"path": "/tmp/project", "modified_since": "yesterday"}) == (
                'Error executing tool list_folder: /modified_since (format): "yesterday" is not a "date-time"'
            )
    run(body())
