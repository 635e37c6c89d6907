"""Data: import a dataset into a task (with a column mapping), browse items, export."""

from pathlib import Path

import streamlit as st

from checkeval_core.datasets import (
    KINDS,
    DatasetError,
    file_columns,
    import_file,
    numeric_columns,
    parse_rows,
)
from checkeval_core.tasks import count_items, default_task, groups, items, list_tasks
from checkeval_core.textsafe import md_escape
from studio_ui.data_ui import (
    column_mapping,
    export_buttons,
    import_waits,
    items_table,
    preview_table,
)
from studio_ui.errors import upload_failed
from studio_ui.frame import page_db

PAGE_SIZE = 100
NEW, EXISTING = "a new task", "an existing task (its items are added)"

st.title("Data")
db = page_db()
tasks = list_tasks(db)
names = [t["name"] for t in tasks]

tab_browse, tab_import = st.tabs(["Browse & export", "Import a file"])

with tab_import:
    st.write("CSV, JSONL or JSON (a list of objects). Fields: `output` is required, `id` too "
             "unless the file has none (then the row numbers); optional `group_id`, "
             "`system_id`, `input`/`source`, `context`, `fact`, `reference`. Human scores: "
             "columns `human_<dimension>`, any numeric column mapped below, or a `scores` "
             "object in JSON rows.")
    up = st.file_uploader("Dataset file", type=["csv", "jsonl", "json"], key="upload")
    # where the file goes is always the person's choice: nothing is pre-set to the current task
    dest = st.radio("Import into", [NEW, EXISTING] if names else [NEW], index=None,
                    horizontal=True, key="import_dest")
    target, kind, clash = "", None, False
    if dest == NEW:
        c1, c2 = st.columns(2)
        target = c1.text_input("New task name", key="import_task")
        kind = c2.selectbox("Task kind", KINDS, index=None, placeholder="choose the kind",
                            key="import_kind")
        clash = target.strip() in names
        if clash:
            st.warning(f"A task named '{md_escape(target.strip())}' already exists: choose "
                       f"*{EXISTING}* to add the file's items to it, or give another name.")
    elif dest == EXISTING:
        target = st.selectbox("Task to add the items to", names, index=None,
                              placeholder="choose a task", key="import_existing") or ""
        if target:
            info = next(t for t in tasks if t["name"] == target)
            st.caption(f"The file's items are added to '{md_escape(target)}' ({info['kind']}, "
                       f"{info['n_items']} items now); an id it already has is refused.")
    else:
        st.caption("Choose where the file goes: a new task, or added to an existing one.")
    if up is not None:
        try:  # no traceback (with server paths) ever reaches the visitor
            data = up.getvalue()
            columns = file_columns(up.name, data)
            mapping = column_mapping(columns, numeric_columns(up.name, data))
            ok = False
            try:
                preview = parse_rows(Path(up.name), mapping, data=data)
                ok = True
                dims = md_escape(", ".join(preview["dimensions"]) or "none")
                st.write(f"{len(preview['items'])} items, {len(preview['scores'])} human "
                         f"scores (dimensions: {dims})")
                for note in preview["notes"]:  # ids from row numbers, columns left out
                    st.caption(md_escape(note))
                preview_table(preview["items"])
            except DatasetError as e:
                st.error("This file cannot be imported:")
                st.code("\n".join(e.errors), language=None, wrap_lines=True)
            waits = import_waits(ok, dest, target, kind, clash, NEW)
            if waits:  # a grey button says what it waits for, not only in a tooltip
                st.caption(waits)
            if st.button("Import", type="primary", key="do_import", disabled=bool(waits),
                         help=waits):
                try:
                    res = import_file(db, up.name, target, kind=kind, mapping=mapping,
                                      data=data, filename=up.name)
                except DatasetError as e:
                    st.error("Nothing was imported:")
                    st.code("\n".join(e.errors), language=None, wrap_lines=True)
                else:
                    st.session_state["task_name"] = res["task"]
                    st.success(f"Imported {res['n_items']} items and {res['n_scores']} human "
                               f"scores into '{md_escape(res['task'])}' ("
                               + ("new task" if dest == NEW else "added to the task") + ").")
        except Exception as e:  # noqa: BLE001 - shown without details, logged in full
            upload_failed(e)

with tab_browse:
    if not names:
        st.info("No task yet: load the demo on the Home page or import a file.")
    else:
        current = st.session_state.get("task_name") or default_task(db)
        task = st.selectbox("Task", names, index=names.index(current) if current in names else 0,
                            key="browse_task")
        st.session_state["task_name"] = task
        info = next(t for t in tasks if t["name"] == task)
        st.caption(f"{info['kind']} · {info['n_items']} items · dimensions: "
                   f"{md_escape(', '.join(info['dimensions']) or 'none')} (the table's score "
                   "columns are the human scores)")
        gs = groups(db, task)
        group = st.selectbox("Group (source document / context)", ["(all)", *gs], key="group")
        gid = None if group == "(all)" else group
        n_rows = count_items(db, task, group_id=gid)
        n_pages = max(1, -(-n_rows // PAGE_SIZE))
        page = st.number_input(f"Page (of {n_pages}; {PAGE_SIZE} items a page, {n_rows} in all)",
                               1, n_pages, 1, key=f"page_{task}_{group}")
        # one page read from the store: a 100,000-item task never loads whole
        its = items(db, task, group_id=gid, limit=PAGE_SIZE, offset=(int(page) - 1) * PAGE_SIZE)
        items_table(its)
        pick = st.selectbox("Show one item of this page in full", [it["item_id"] for it in its],
                            key="one")
        one = next((it for it in its if it["item_id"] == pick), None)
        if one:
            for field in ("source", "context", "fact", "reference", "output"):
                if one[field]:
                    st.markdown(f"**{field}**")
                    st.text(one[field])
        st.subheader("Export")
        # the whole task is read only when asked for (never on every widget change)
        if st.toggle(f"Prepare the export files of all {info['n_items']} items", key="exp_on"):
            export_buttons(db, task)
