// Vault memory's browser page: the editor view, and the question asked before leaving it
// with unsaved text (app.js's route() asks mayLeave() first).

import {
  ApiError, PathError, api, clearErrors, crumbs, fail, fillLines, flash, focusNext, h, hasRightToLeft, link, noteActions,
  notePath, pathName, say, show, state,
} from "./lib.js";
import { withLineEnds } from "./line_ends.js";

// A typed "./a.md" or "a//b.md" is a harmless spelling (the server normalizes it): its "."
// and inner empty segments go here, where a "." would be a step in the URL. A leading "/"
// and a trailing one stay, for the server to refuse in words.
function typedPath(text) {
  const parts = text.trim().split("/");
  return parts.filter((part, i) => part !== "." && (part !== "" || i === 0 || i === parts.length - 1)).join("/");
}

export async function edit(lang, path, folder) {
  const isNew = path === null;
  let etag = null;
  let content = "---\ntitle: \n---\n# \n";
  if (!isNew) {
    let data;
    ({ etag, data } = await api("GET", notePath(lang, path)));
    // Bytes that are not UTF-8 come as base64: saved from the editor, that text would
    // replace them.
    if (data.encoding === "base64") throw new PathError(`${path} is not UTF-8 text: it cannot be edited here`, [path]);
    content = data.content;
  }
  // (autocomplete off: Chromium kept the text in the history entry of every address the
  // page moved to, a save's too: 0.4 s of a 5 MB note's save, see the commit)
  const editor = h("textarea", { id: "editor", spellcheck: "false", autocomplete: "off" });
  editor.value = content;
  const pathInput = isNew ? h("input", { id: "new-path", value: folder ? `${folder}/new-note.md` : "new-note.md" }) : null;
  // Where the new note goes, folder by folder (pathName): a text field lays a right-to-left
  // path out as one run and cannot isolate its parts ("ملاحظات/2024/مجلد/new-note.md"
  // showed مجلد at the left, then 2024, then ملاحظات). Said for a path that has a
  // right-to-left character; a Latin path reads in its field as it is.
  const pathShown = isNew ? h("p", { class: "muted", id: "new-path-shown", hidden: true }) : null;
  const showPath = () => {
    const target = typedPath(pathInput.value);
    pathShown.replaceChildren("Saved as ", pathName(target), ".");
    pathShown.hidden = !hasRightToLeft(target);
  };
  const conflict = h("section", { class: "conflict", hidden: true });
  const saveButton = h("button", { id: "save", class: "primary", onclick: () => save().catch(fail) }, "Save");
  // The text as on disk (or the new note's template): anything else typed is unsaved, and
  // leaving the view asks first (route, beforeunload).
  let saved = editor.value; // (as the textarea holds it: CRLF reads as LF)
  let opened = content; // (as the file holds it: a save puts its own line breaks back)
  state.editing = { hash: location.hash, pos: state.pos, returning: false, dirty: () => editor.value !== saved };
  let saving = false;

  async function save(overwriteEtag) {
    // One save at a time: a double click's second PUT met the first one's new etag and
    // answered "changed elsewhere" about the user's own save.
    if (saving) return;
    saving = true;
    saveButton.disabled = true;
    // Read-only while its text is on its way (a 5 MB note's save: 5-9 s): what was typed
    // meanwhile was taken as saved, and the page moved on without it, unasked.
    editor.readOnly = true;
    clearErrors(); // (an earlier attempt's refusal is not this one's)
    try {
      await put(overwriteEtag);
    } finally {
      saving = false;
      saveButton.disabled = false;
      editor.readOnly = false;
    }
  }

  async function put(overwriteEtag) {
    const target = isNew ? typedPath(pathInput.value) : path;
    const precondition = overwriteEtag ? { "If-Match": `"${overwriteEtag}"` }
      : etag ? { "If-Match": `"${etag}"` } : { "If-None-Match": "*" };
    let written;
    const body = withLineEnds(opened, editor.value);
    try {
      ({ data: written } = await api("PUT", notePath(lang, target), { body, headers: precondition }));
    } catch (err) {
      if (err instanceof ApiError && err.status === 412) return showConflict(target);
      throw err;
    }
    saved = editor.value;
    opened = body;
    flash(["Saved ", pathName(written.path), "."]); // (the path as the server wrote it)
    focusNext(noteActions); // (Enter on Edit: back in the editor)
    location.hash = link(lang, "note", written.path);
  }

  async function showConflict(target) {
    // Nothing is lost: your text stays in the editor until you choose.
    let theirs = null;
    try {
      theirs = (await api("GET", notePath(lang, target))).data;
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
    }
    conflict.hidden = false;
    // Which of three it is, said alike in the box and the message (a note gone from disk
    // was headed "Changed elsewhere", and the message said "the note changed elsewhere").
    const taken = isNew && !etag && theirs;
    const gone = !theirs;
    // (nulls left out: replaceChildren writes a null as the text "null")
    conflict.replaceChildren(...[
      h("h2", { text: taken ? "A note is there already" : gone ? "Deleted elsewhere" : "Changed elsewhere" }),
      h("p", {}, taken
        ? [pathName(target), " exists already. Your text is still in the editor; here is the note there now."]
        : gone ? "This note was deleted or moved away since you opened it. Your text is still in the editor; "
            + "saving it makes the note again here."
          : "This note was changed since you opened it. Your text is still in the editor; here is the version on disk now."),
      theirs ? fillLines(h("pre", { class: "theirs" }), theirs.content) : null,
      h("div", { class: "actions" },
        h("button", { id: "overwrite", onclick: () => (theirs ? save(theirs.etag) : (etag = null, save())).catch(fail) },
          "Save mine over it"),
        theirs ? h("button", { id: "take-theirs", onclick: () => {
          if (!confirm("Replace your text in the editor with the version on disk?")) return;
          const mine = editor.value;
          editor.value = theirs.content;
          swapped = { mine, theirs: editor.value };
          saved = editor.value;
          opened = theirs.content;
          etag = theirs.etag;
          conflict.hidden = true;
          editor.focus(); // (the button went away with the box: the focus fell to the page)
          say("Took the version on disk. Ctrl+Z brings your text back.", "warn");
        } }, "Take theirs") : null),
    ].filter(Boolean));
    say(taken ? ["Not saved: ", pathName(target), " exists already."] : gone ? "Not saved: the note was deleted or moved away."
      : "Not saved: the note changed elsewhere.", "warn");
  }

  // Ctrl+Z after "Take theirs" brings the user's text back, Ctrl+Shift+Z (Ctrl+Y) theirs
  // again. Setting the text cleared the browser's undo history, so the text typed before
  // was lost to Ctrl+Z; and the browser's own way to keep it (execCommand insertText)
  // took 1.7 s for a text of 1,000 lines, 20 s for 200 KB (it grows with the lines).
  // The browser's undo runs as usual for what is typed after; once it is back at their
  // text, the next Ctrl+Z is this one.
  let swapped = null;
  editor.addEventListener("keydown", (event) => {
    if (!swapped || !(event.ctrlKey || event.metaKey) || event.altKey) return;
    const key = event.key.toLowerCase();
    const undo = key === "z" && !event.shiftKey;
    const redo = (key === "z" && event.shiftKey) || (key === "y" && !event.shiftKey);
    const to = undo && editor.value === swapped.theirs ? swapped.mine
      : redo && editor.value === swapped.mine ? swapped.theirs : null;
    if (to === null) return;
    event.preventDefault();
    editor.value = to;
    editor.setSelectionRange(0, 0);
    say(undo ? "Your text is back (Ctrl+Shift+Z takes the version on disk again)." : "Took the version on disk again.", "warn");
  });

  // The keyboard: Ctrl+S (Cmd+S) saves, as in an editor (the browser saved the page as a
  // file); Enter in the new note's path field saves too.
  editor.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === "s") {
      event.preventDefault();
      save().catch(fail);
    }
  });
  // Tab types a tab, as in an editor (it moved the focus on: no tab could be typed, nor a
  // list item indented with one); Esc, then Tab, moves on (no keyboard trap). Typed as
  // the browser types, so its own undo takes it back.
  let escaped = false;
  editor.addEventListener("keydown", (event) => {
    const moveOn = escaped;
    escaped = event.key === "Escape";
    if (event.key !== "Tab" || moveOn || event.shiftKey || event.ctrlKey || event.altKey || event.metaKey) return;
    event.preventDefault();
    if (!document.execCommand("insertText", false, "\t")) editor.setRangeText("\t", editor.selectionStart, editor.selectionEnd, "end");
  });
  if (isNew) {
    showPath();
    pathInput.addEventListener("input", showPath);
  }
  pathInput?.addEventListener("keydown", (event) => {
    if (event.key === "Enter") save().catch(fail);
  });

  show(
    isNew ? crumbs(lang, folder, false) : crumbs(lang, path, true),
    h("h1", { text: isNew ? "New note" : `Edit ${path.split("/").pop()}` }),
    isNew ? h("label", { class: "field" }, "Path ", pathInput) : null,
    pathShown,
    conflict,
    editor,
    h("p", { class: "muted", id: "editor-keys", text: "Tab types a tab; Esc, then Tab, moves on. Ctrl+S saves." }),
    h("div", { class: "actions" },
      saveButton,
      h("a", { class: "button", href: isNew ? link(lang, "browse", folder) : link(lang, "note", path), text: "Cancel" })),
  );
  editor.focus();
}

const LEAVE = "Leave the editor? Your changes are not saved and will be lost.";

// Unsaved text in the editor: leaving its view asks first. A hash change cannot be
// cancelled, so a "stay" goes back to the editor's own history entry (state.pos, see
// app.js's placeInHistory) and keeps the view as it is. (It wrote the editor's address
// over the entry Back had reached: the next Back skipped that view; and after a link,
// the editor was in the history twice.)
export function mayLeave() {
  const editing = state.editing;
  if (editing?.returning && location.hash === editing.hash) {
    editing.returning = false; // (the way back after a "stay": the view is still here)
    return false;
  }
  if (!editing || location.hash === editing.hash) return true;
  if (editing.dirty() && !confirm(LEAVE)) {
    const pos = window.history.state?.pos; // (a number: Back or Forward went there; none: a new entry)
    const steps = typeof pos === "number" ? editing.pos - pos : -1;
    if (steps) {
      editing.returning = true;
      window.history.go(steps); // (the window's: app.js has a history() view)
    } else window.history.replaceState(window.history.state, "", editing.hash);
    document.getElementById("vault-picker").value = state.lang || "";
    return false;
  }
  state.editing = null;
  return true;
}

// A move the page makes itself (a link's click, the vault picker, a search) asks before
// the address changes, so a "stay" makes no history entry: asked after (mayLeave), the
// way back to the editor left the declined address a Forward away. True: go on.
export function mayGo(hash) {
  const editing = state.editing;
  if (!editing || hash === editing.hash || !editing.dirty()) return true;
  if (!confirm(LEAVE)) return false;
  state.editing = null; // (asked once: route's mayLeave lets it go)
  return true;
}

// Every link to another view of this page asks first (mayGo), a plain click or Enter on
// it; one opened in another tab or window (a modifier key) leaves the editor as it is.
export function askBeforeLinks() {
  document.addEventListener("click", (event) => {
    const anchor = event.target instanceof Element ? event.target.closest("a[href]") : null;
    if (!anchor || event.defaultPrevented || event.button !== 0) return;
    if (event.ctrlKey || event.metaKey || event.shiftKey || event.altKey || anchor.target) return;
    const to = new URL(anchor.href);
    if (to.origin !== location.origin || to.pathname !== location.pathname || !to.hash) return;
    if (to.hash !== location.hash && !mayGo(to.hash)) event.preventDefault();
  });
}
