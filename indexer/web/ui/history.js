// Vault memory's browser page: a file's history view (its versions, a diff between two,
// restoring one), and the restore the note view of an old version offers too.

import {
  ApiError, api, clearErrors, crumbs, enc, fail, flash, focusNext, h, inBlocks, link, noteActions, pathName, pathText,
  plural, say, seg, show,
} from "./lib.js";

const view = () => document.getElementById("view");

// A version with no etag records that the file did not exist then: a deletion, or the
// move that took it elsewhere. It has no text to view, diff or restore (the server
// refuses those); the version before it holds the text as it was.
const hasText = (v) => typeof v.etag === "string" && v.etag !== "";

function changeCell(lang, v) {
  if (v.moved_to) return h("td", {}, "moved to ", h("a", { href: link(lang, "note", v.moved_to) }, pathName(v.moved_to)));
  if (v.moved_from) return h("td", {}, "moved from ", h("a", { href: link(lang, "history", v.moved_from) }, pathName(v.moved_from)));
  return h("td", { text: v.op ?? "" });
}

function absentBanner(path, newest, current) {
  if (current !== "" || !newest) return null;
  const said = newest.moved_to ? [" was moved to ", pathName(newest.moved_to), "; the versions below are from before."]
    : newest.op === "delete" ? " was deleted. Restore a version (the one before the deletion holds its last text) to bring it back."
      : " does not exist now. Restore a version to bring it back.";
  return h("p", { class: "banner" }, pathName(path), said);
}

const HISTORY_SHOWN = 100;

export async function history(lang, path) {
  // One more than shown: whether older versions exist (the page cut at 100 unsaid).
  const { data } = await api("GET", `/${seg(lang)}/history/${enc(path)}?limit=${HISTORY_SHOWN + 1}`);
  const current = await shownEtag(lang, path);
  const older = (data.versions || []).length > HISTORY_SHOWN;
  const versions = (data.versions || []).slice(0, HISTORY_SHOWN);
  const diffBox = h("pre", { class: "diff", hidden: true });
  const pick = (id, withCurrent) => h("select", { id }, withCurrent ? h("option", { value: "", text: "current file" }) : null,
    versions.map((v) => h("option", { value: String(v.version), text: `${v.version} · ${v.at || ""}${hasText(v) ? "" : ` · ${v.op}`}` })));
  const from = pick("diff-from", false);
  const to = pick("diff-to", true);
  if (versions.length > 1) from.value = String(versions[1].version); // the one before the newest
  async function showDiff(a, b) {
    clearErrors();
    const q = `from=${encodeURIComponent(a)}${b ? `&to=${encodeURIComponent(b)}` : ""}`;
    const [{ data: d }, gone] = await Promise.all([api("GET", `/${seg(lang)}/diff/${enc(path)}?${q}`),
      b || current === "" ? null : goneSince(lang, path)]);
    diffBox.hidden = Boolean(gone);
    if (gone) return view().prepend(gone);
    diffBox.replaceChildren(...inBlocks(d.diff.split("\n").map((line, i) => (i < 2 ? headLine(line) : diffLine(line)))));
  }
  const rowActions = (v) => (hasText(v)
    ? [h("a", { href: `${link(lang, "note", path)}?version=${encodeURIComponent(v.version)}`, text: "view" }), " ",
      h("button", { class: "diff-current", onclick: () => showDiff(v.version, "").catch(fail) }, "diff with current"), " ",
      h("button", { class: "restore", onclick: () => restore(lang, path, v.version, current) }, "restore")]
    : h("span", { class: "muted", text: v.moved_to ? "no text here: see its new place" : "no text: the file did not exist" }));
  show(
    crumbs(lang, path, true),
    h("h1", {}, "History of ", pathName(path.split("/").pop())),
    absentBanner(path, versions[0], current),
    versions.length ? h("table", { class: "history-table" },
      h("thead", {}, h("tr", {}, ["version", "when", "change", "by", "reason", "size", ""].map((t) => h("th", { text: t })))),
      h("tbody", {}, versions.map((v) => h("tr", { "data-version": String(v.version), "data-op": v.op },
        h("td", { text: v.version ?? "" }), h("td", { text: v.at ?? "" }), changeCell(lang, v),
        [v.actor, v.reason, v.size].map((t) => h("td", { text: t ?? "" })),
        h("td", { class: "row-actions" }, rowActions(v), undoButton(lang, path, v))))))
      : h("p", { class: "muted", text: "No versions recorded." }),
    older ? h("p", { class: "muted", id: "older-versions", text: `Only the newest ${HISTORY_SHOWN} versions are listed; `
      + `older ones are kept too (\`indexer history\`, or the API's /history with a larger limit).` }) : null,
    versions.length ? h("div", { class: "actions" }, "Diff ", from, " → ", to,
      h("button", { id: "show-diff", onclick: () => showDiff(from.value, to.value).catch(fail) }, "Show diff")) : null,
    diffBox,
  );
}

// The diff's first two lines name the two versions ("--- <path>@<version>"): the path an
// island, the version beside it.
function headLine(line) {
  const at = line.lastIndexOf("@");
  if (!/^(---|\+\+\+) /.test(line) || at < 4) return diffLine(line);
  return h("span", { class: "hunk" }, line.slice(0, 4), pathName(line.slice(4, at)), `${line.slice(at)}\n`);
}

// A changed or kept line's text takes the direction of its own words (an Arabic line's
// full stop stood at its right end), its "+", "-" or " " kept in the left column. Only
// "@@" starts a hunk's heading here: a removed "--" line ("---") is a removed line.
function diffLine(line) {
  const cls = line.startsWith("@@") ? "hunk" : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "";
  if (cls === "hunk" || !line) return h("span", { class: cls, text: `${line}\n` });
  return h("span", { class: cls }, line.slice(0, 1), h("span", { class: "line-text", text: line.slice(1) }), "\n");
}

// A file this view showed that is not there now: moved (an agent's move, a `mv` outside)
// or deleted since. Said in words with the way on (its new place's history), else null.
// A diff with "current" showed every line removed, as if the note were emptied, and a
// restore said "the note changed", the way on unsaid.
async function goneSince(lang, path, lead = "") {
  if (await shownEtag(lang, path)) return null;
  const { data } = await api("GET", `/${seg(lang)}/history/${enc(path)}?limit=1`);
  const newest = (data.versions || [])[0];
  const to = newest && !hasText(newest) ? newest.moved_to : null;
  const name = pathName(path, "name");
  return h("div", { class: "error", id: "gone" }, lead, name, to
    ? [" was moved to ", h("a", { href: link(lang, "history", to) }, pathName(to)),
      " since this page showed it: its history goes on there."]
    : " is not there now: it was deleted or moved since this page showed it. Reload to see its history as it is.");
}

// The file's etag as a view showed it ("" when there is none): a restore from that view
// replaces only that file, not a write made since (an agent's), which it would hide.
// (stat, not read: a file over the read limit has an etag too)
export async function shownEtag(lang, path) {
  return (await api("GET", `/${seg(lang)}/stat/${enc(path)}`)).data.etag || "";
}

export async function restore(lang, path, version, ifMatch) {
  if (!confirm(`Restore version ${version} of ${pathText(path)}?`)) return;
  const body = { path, version: /^\d+$/.test(String(version)) ? Number(version) : version, if_match: ifMatch };
  try {
    await api("POST", `/${seg(lang)}/restore`, { body, type: "json" });
  } catch (err) {
    const gone = err instanceof ApiError && err.status === 412 ? await goneSince(lang, path, "Not restored: ") : null;
    if (gone) return (clearErrors(), view().prepend(gone));
    if (err instanceof ApiError && err.status === 412) {
      return fail(new ApiError(412, "conflict", "Not restored: the note changed since this page showed it. Reload to see it."));
    }
    return fail(err);
  }
  flash([`Restored version ${version} of `, pathName(path), "."]);
  focusNext(noteActions);
  location.hash = link(lang, "note", path);
}

// A version a memory entry wrote (its reason "entry:<id> <title>", the Memory Writer's)
// can be undone from here as by `agent-client undo <id>`: every file the entry changed
// back to before it, all or nothing. The files are named before asking (a dry run); one
// changed since is the server's refusal, said as it says it (the CLI's own words), with
// nothing changed.
const entryOf = (v) => /^entry:([A-Za-z0-9][A-Za-z0-9_.:-]{0,127})$/.exec((v.reason || "").split(" ")[0])?.[1];

function undoButton(lang, path, v) {
  const entry = entryOf(v);
  if (!entry) return null;
  return [" ", h("button", { class: "undo-entry", "data-entry": entry, onclick: () => undoEntry(lang, path, entry) },
    "undo entry")];
}

async function undoEntry(lang, path, entry) {
  clearErrors();
  const call = (dryRun) => api("POST", `/${seg(lang)}/undo`, { body: { entry_id: entry, dry_run: dryRun }, type: "json" });
  let files = [];
  try {
    files = (await call(true)).data.files.map((f) => f.path);
    const named = files.slice(0, 10).map(pathText).join(", ") + (files.length > 10 ? ` and ${files.length - 10} more` : "");
    if (!confirm(`Undo memory entry ${entry}? ${plural(files.length, "file")} it changed go back to before it `
      + `(one it made is deleted): ${named}.`)) return;
    const done = (await call(false)).data.files;
    await history(lang, path);
    say(`Undid memory entry ${entry}: ${plural(done.length, "file")} put back.`);
    document.querySelector("#view .history-table tbody a")?.focus();
  } catch (err) {
    // A refusal names the files changed since ("…: ملاحظات/2024/كتاب.md (changed since by
    // tool in version 4)"): this view's and those the dry run named are laid out in it.
    if (err instanceof ApiError) err.paths.push(path, ...files);
    fail(err);
  }
}
