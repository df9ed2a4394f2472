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
