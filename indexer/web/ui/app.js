// Vault memory's browser page: plain DOM over the REST API at /api/v1, no framework.
// Its views and routing (the editor: editor.js); lib.js holds the API client and the DOM
// helpers. Rule of the page: text from the vault goes in through textContent only (see
// lib.js's htmlBlock).

import { askBeforeLinks, edit, mayGo, mayLeave } from "./editor.js";
import { history, restore, shownEtag } from "./history.js";
import {
  ApiError, LANG, SUMMARY_FILE, api, codePointsAfter, crumbs, enc, errorBox, fail, fillLines, flash, focusNext, h,
  htmlBlock, isSummary, link, notePath, pathName, pathText, plural, propertiesTable, say, seg, show, state, value,
} from "./lib.js";

// ---- views -----------------------------------------------------------------------

async function home() {
  const langs = Object.entries(state.status.langs || {});
  show(
    h("h1", { text: "Vaults" }),
    langs.length
      ? h("ul", { class: "vaults" }, langs.map(([lang, n]) =>
        h("li", {}, h("a", { href: `#/${seg(lang)}`, class: "vault", "data-lang": lang },
          h("strong", { text: lang }), h("span", { class: "muted", text: ` ${plural(n, "note")}` })))))
      : h("p", { class: "muted", text: "No vault has notes yet." }),
    statusPanel(),
  );
}

function statusPanel() {
  const s = state.status;
  const rows = [
    // (a folder's path, read folder by folder: one in Arabic or Hebrew was one run)
    ["version", s.version], ["workspace", typeof s.workspace === "string" ? pathName(s.workspace) : s.workspace],
    ["index", indexSays(s)],
  ];
  const watcher = s.sync?.watcher;
  if (watcher) rows.push(["file watching", watchingSays(watcher)]);
  const shut = Object.entries(s.sync?.unreadable_vaults || {});
  if (shut.length) {
    rows.push(["unreadable vaults", shut.map(([lang, why]) => `${lang} cannot be read (${why}): its notes in search `
      + "may be out of date").join("; ")]);
  }
  // Names the vault refuses (made by another program): no listing shows them (the server
  // sends them escaped, a U+202E as the text \u202e).
  const unreachable = Object.entries(s.unreachable || {});
  if (unreachable.length) {
    rows.push(["unreachable files", h("span", {}, unreachable.flatMap(([lang, u], i) => [i ? "; " : null,
      `${lang}: ${u.partial ? "at least " : ""}${u.count} files or folders no tool can list, search or read `
      + "(a name the vault refuses, or too deep): ", ...pathNames(u.sample), "; rename or move them"]))]);
  }
  if (s.index) rows.push(["index notes", s.index.notes], ["index problems", s.index.problems], ["last reconcile", s.index.last_reconcile]);
  rows.push(["features", Object.entries(state.features).filter(([, on]) => on).map(([k]) => k).join(", ") || "files only"]);
  if (s.jobs) rows.push(["jobs", value(s.jobs)]);
  return h("section", { class: "status" }, h("h2", { text: "Status" }),
    h("table", { class: "properties" }, h("tbody", {}, rows.map(([k, v]) => h("tr", {}, h("th", { text: k }),
      h("td", {}, v instanceof Node ? v : value(v ?? "–")))))),
    h("h3", { text: "Notes per vault" }),
    h("table", { class: "langs" }, h("tbody", {}, Object.entries(s.langs || {}).map(([k, v]) => h("tr", {}, h("th", { text: k }), h("td", { text: String(v) }))))));
}

// "ready" alone was shown while the file watcher had stopped or a vault could not be
// read: the index is then behind the disk, and the server says why (sync.reason).
function indexSays(s) {
  if (!s.index_ready) return "catching up";
  return s.index_partial ? `ready, but behind the files on disk: ${s.sync?.reason || "catching up"}` : "ready";
}

function watchingSays(watcher) {
  if (watcher.state === "running") return "on: changes on disk are indexed as they happen";
  const why = watcher.last_error ? ` (${watcher.last_error})` : "";
  if (watcher.state === "polling") {
    return `stopped${why}: changes on disk are found only by a periodic reconcile, and it is retried`;
  }
  return `${watcher.state}${why}: changes made on disk by other programs are not watched`;
}

async function statusView() {
  await loadStatus();
  show(h("h1", { text: "Status" }), statusPanel());
}

async function summaryOf(lang, path) {
  if (!state.features.summaries) return null;
  try {
    return (await api("GET", `/${seg(lang)}/summary?format=html&path=${encodeURIComponent(path)}`)).data;
  } catch {
    return null;
  }
}


// A folder in one request: one walk on the server lists its own text files (notes, and
// the plain text files Claude's memory tool keeps), its other files (pictures: opened
// through the raw route) and its subfolders, each
// with the count of text files below it and its summary's abstract. (The page walked
// the folder once per text suffix, then asked /summary once per subfolder: 3,002
// requests for a folder of 3,000.) Its own files come a page at a time, in the server's
// order (by path): "Show more" asks for the ones after the last shown (after=, a cursor:
// a note added or deleted meanwhile shifts nothing; the page said "Only the first 10,000
// files of this folder are listed" and had no way to the rest).
const FOLDER_PAGE = 2000;

function folderPage(lang, folder, after) {
  const cursor = after === undefined ? "" : `&after=${encodeURIComponent(after)}`;
  return api("GET", `/${seg(lang)}/folder?path=${encodeURIComponent(folder)}&limit=${FOLDER_PAGE}${cursor}`);
}

async function browse(lang, folder) {
  const [{ data }, summary] = await Promise.all([folderPage(lang, folder), summaryOf(lang, folder)]);
  // The folder as the server spelled it (NFC, no trailing "/"): cut by the address's
  // spelling, notes/ listed "otes.md" and a decomposed é "afé.md".
  const prefix = data.path ? data.path + "/" : "";
  const folderItems = data.folders.map((sub) => {
    const name = sub.path.slice(prefix.length);
    return h("li", { class: "folder" }, h("a", { href: link(lang, "browse", sub.path), text: `${name}/` }),
      // (every note below it: a summary's abstract counts its direct children)
      h("span", { class: "muted", text: (sub.files === null ? " (not counted)" : ` ${plural(sub.files, "note")} inside`)
        + (sub.unreachable ? `, and ${entries(sub.unreachable)} no tool can reach (see Status)` : "") }),
      h("div", { class: "abstract muted", text: sub.abstract || "" }));
  });
  const summaryHistory = summary && summary.updated && state.features.history
    ? h("a", { class: "button", id: "summary-history", href: link(lang, "history", prefix + SUMMARY_FILE), text: "Summary history" })
    : null;
  const overview = summary ? h("section", { class: "summary" },
    h("p", { class: "abstract", text: summary.abstract }), htmlBlock(summary.overview_html || "", "overview"),
    summaryHistory) : null;
  const notes = h("ul", { class: "notes" });
  const others = h("ul", { class: "files" });
  const count = h("p", { class: "muted", id: "files-count" });
  const more = h("button", { id: "more-files" }, "Show more");
  let shown = 0;
  const add = (page) => {
    notes.append(...page.files.map((path) =>
      h("li", {}, h("a", { href: link(lang, "note", path), "data-path": path, text: path.slice(prefix.length) }))));
    others.append(...(page.others || []).map((path) =>
      h("li", {}, h("a", { href: `/api/v1/${seg(lang)}/raw/${enc(path)}`, text: path.slice(prefix.length) }))));
    others.hidden = !others.children.length;
    shown += page.files.length + (page.others || []).length;
    count.textContent = `${plural(shown, "file")} of ${(page.total ?? shown).toLocaleString("en")} shown.`;
    count.hidden = !page.truncated;
    more.hidden = !page.truncated;
    more.onclick = async () => {
      more.disabled = true;
      try {
        add((await folderPage(lang, folder, page.next_after)).data);
      } catch (err) {
        fail(err);
      } finally {
        more.disabled = false;
      }
    };
  };
  add(data);
  show(
    crumbs(lang, folder, true),
    h("div", { class: "actions" }, h("a", { class: "button", href: link(lang, "new", folder), text: "New note" })),
    overview,
    folderItems.length ? h("ul", { class: "folders" }, folderItems) : null,
    notes,
    others,
    count,
    more,
    data.counted ? null : h("p", { class: "muted", text: "The folder is too large to count every note below it in time." }),
    unreachableHere(data.unreachable, prefix),
    !folderItems.length && !data.files.length && !(data.others || []).length && !data.unreachable?.count
      ? h("p", { class: "muted", text: "No notes here." }) : null,
  );
}

const entries = (n) => `${n.toLocaleString("en")} ${n === 1 ? "file or folder" : "files or folders"}`;

// The folder's own entries no tool can reach (names the vault refuses, made by another
// program): a folder of only such names said "No notes here." while the status named them.
function unreachableHere(found, prefix) {
  if (!found?.count) return null;
  return h("p", { class: "banner", id: "unreachable-here" }, `${found.partial ? "At least " : ""}${entries(found.count)} `
    + "here no tool can list, search or read (a name the vault refuses, or too deep): ",
  pathNames(found.sample.map((p) => p.slice(prefix.length))),
  `${found.count > found.sample.length ? ", …" : ""}; rename or move ${found.count === 1 ? "it" : "them"}.`);
}

// Paths in a list, each read folder by folder (pathName) and kept apart from the next: two
// Arabic names side by side made one run, the second at the left.
const pathNames = (paths) => paths.flatMap((path, i) => [i ? ", " : null, pathName(path)]);

function snippet(text) {
  // Hits come wrapped in **…**: alternate plain text and <mark>, all as text nodes. A hit
  // inside the note's own **bold** arrives as ****hit****: one mark, not two empty ones.
  const parts = text.replace(/\*{4}/g, "**").split("**");
  return h("p", { class: "snippet" }, parts.map((part, i) => (i % 2 ? h("mark", { text: part }) : part)));
}

const SEARCH_SHOWN = 50;

async function search(lang, q) {
  document.getElementById("search-input").value = q;
  if (!state.features.search) return show(h("p", { class: "error", text: "Search needs the index." }));
  if (!q.trim()) return show(h("p", { class: "muted", text: "Type words to search for." }));
  const { data } = await api("GET", `/${seg(lang)}/search?limit=${SEARCH_SHOWN}&q=${encodeURIComponent(q)}`);
  // (50 hits of 3,000 read as if the vault held 50: say how many there are)
  const more = typeof data.total === "number" && data.total > data.results.length;
  show(
    h("h1", {}, "Search ", h("q", { text: q }), " in ", h("span", { class: "vault-name", text: lang })),
    data.partial ? h("p", { class: "muted", text: "The index is still catching up; results may be missing." }) : null,
    more ? h("p", { class: "muted", id: "search-count", text: `The best ${data.results.length} of ${plural(data.total, "note")} found: `
      + "add words to narrow the search." }) : null,
    data.results.length
      ? h("ol", { class: "search-results" }, data.results.map((r) =>
        h("li", {}, h("a", { href: link(lang, "note", r.path) }, r.title || pathName(r.path)),
          h("span", { class: "path muted" }, " ", pathName(r.path)), snippet(r.snippet))))
      : h("p", { class: "muted", text: "Nothing found." }),
  );
}

async function note(lang, path, version, heading) {
  const suffix = version ? `?version=${encodeURIComponent(version)}` : "";
  let data;
  try {
    ({ data } = await api("GET", `/${seg(lang)}/render/${enc(path)}${suffix}`));
  } catch (err) {
    if (version || !(err instanceof ApiError && err.status === 413)) throw err;
    return oversized(lang, path);
  }
  const current = version ? await shownEtag(lang, path) : data.etag;
  const body = htmlBlock(data.html, "note-body");
  body.querySelectorAll("pre.plain-text").forEach((pre) => fillLines(pre, pre.textContent));
  const actions = version
    ? [h("a", { class: "button", href: link(lang, "note", path), text: "Current version" }),
      h("button", { id: "restore", onclick: () => restore(lang, path, version, current) }, "Restore this version")]
    : [isSummary(path) ? null : h("a", { class: "button", id: "edit", href: link(lang, "edit", path), text: "Edit" }),
      state.features.history ? h("a", { class: "button", id: "history", href: link(lang, "history", path), text: "History" }) : null,
      isSummary(path) ? null : h("button", { class: "danger", id: "delete", onclick: () => remove(lang, path, data.etag) }, "Delete")];
  show(
    crumbs(lang, path, true),
    version ? h("p", { class: "banner", text: `Version ${version} (read-only)` }) : null,
    h("h1", { class: "note-title", text: noteTitle(path, data.properties, body) }),
    h("div", { class: "actions" }, actions),
    data.frontmatter_error ? h("p", { class: "error", text: `Frontmatter: ${data.frontmatter_error}` }) : null,
    propertiesTable(data.properties),
    body,
  );
  if (heading) scrollToHeading(heading);
}

// The title search gives a note (SPEC): its frontmatter's, else its first `# ` heading,
// else its file name (a note's without ".md"; a plain text file's whole). The page showed
// the file name ("go.md") where search said "Go"; the crumbs above still show the path.
function noteTitle(path, properties, body) {
  const name = path.split("/").pop();
  if (!name.endsWith(".md")) return name;
  const own = properties.title;
  if (["string", "number", "boolean"].includes(typeof own) && String(own).trim()) return String(own);
  const heading = body.querySelector(":scope > h1");
  return (heading && heading.textContent.trim()) || name.slice(0, -".md".length);
}

// A link to a heading (Obsidian's [[Note#Heading]], [[Note#Part#Heading]] below a part):
// the note opens there, at the first heading whose text reads the same, case aside.
function scrollToHeading(heading) {
  const wanted = heading.split("#").pop().trim().toLowerCase();
  const found = [...document.querySelectorAll(".note-body :is(h1, h2, h3, h4, h5, h6)")]
    .find((element) => element.textContent.trim().toLowerCase() === wanted);
  if (found) found.scrollIntoView();
}

const bytes = (n) => (n < 1024 * 1024 ? plural(n, "byte") : `${(n / 1024 / 1024).toFixed(1)} MiB (${plural(n, "byte")})`);

// A file over the server's read limit (made by another program): read whole, rendered
// and edited nowhere, but seen for what it is, its beginning as plain text, and deleted.
async function oversized(lang, path) {
  const [{ data: info }, { data: start }] = await Promise.all([
    api("GET", `/${seg(lang)}/stat/${enc(path)}`), api("GET", `/${seg(lang)}/head/${enc(path)}`)]);
  const text = start.encoding === "utf-8";
  show(
    crumbs(lang, path, true),
    h("h1", { class: "note-title", text: path.split("/").pop() }),
    h("p", { class: "banner too-large", text: `This file is ${bytes(info.size)}, over the limit of ${bytes(start.max_file_bytes)} `
      + "the server reads whole: it cannot be shown, edited or restored over here. It can be deleted." }),
    h("div", { class: "actions" },
      state.features.history ? h("a", { class: "button", id: "history", href: link(lang, "history", path), text: "History" }) : null,
      isSummary(path) ? null : h("button", { class: "danger", id: "delete", onclick: () => remove(lang, path, info.etag) }, "Delete")),
    h("h2", { text: text ? `Its first ${bytes(new TextEncoder().encode(start.content).length)}, as plain text` : "Its beginning is not UTF-8 text" }),
    text ? h("pre", { class: "file-start", text: start.content }) : null,
  );
}

async function remove(lang, path, etag) {
  if (!confirm(`Delete ${pathText(path)}?`)) return;
  // Only the note as shown: a write since (an agent's) is not deleted unseen.
  try {
    await api("DELETE", notePath(lang, path), { headers: { "If-Match": `"${etag}"` } });
  } catch (err) {
    if (err instanceof ApiError && err.status === 412) {
      return fail(new ApiError(412, "conflict", "Not deleted: the note changed since this page showed it. Reload to see it."));
    }
    return fail(err);
  }
  flash(["Deleted ", pathName(path), "."]);
  focusNext(() => besideDeleted(path));
  location.hash = link(lang, "browse", path.split("/").slice(0, -1).join("/"));
}

// After a delete, the folder's next note (the one listed after it), else the last, else
// New note: the keyboard goes on from where the deleted note was listed.
function besideDeleted(path) {
  const listed = [...document.querySelectorAll("#view ul.notes a[data-path]")];
  return listed.find((a) => codePointsAfter(a.dataset.path, path)) || listed.at(-1)
    || document.querySelector("#view > .actions a");
}

// ---- routing ---------------------------------------------------------------------

async function loadStatus() {
  state.status = (await api("GET", "/status")).data;
  state.features = state.status.features || {};
  const picker = document.getElementById("vault-picker");
  const langs = Object.keys(state.status.langs || {});
  if (state.lang && !langs.includes(state.lang)) langs.push(state.lang);
  picker.replaceChildren(h("option", { value: "", text: "—" }), ...langs.map((l) => h("option", { value: l, text: l })));
  picker.value = state.lang || "";
  searchBoxSays();
}

// The vault the search box searches: the one last opened (the picker shows it, the home
// page too), else the only one. With several and none opened it asks rather than guess
// (it took the alphabetically first: 北京 searched in ar, "Nothing found.").
function searchedVault() {
  const langs = Object.keys(state.status?.langs || {});
  return state.lang || (langs.length === 1 ? langs[0] : null);
}

function searchBoxSays() {
  const lang = searchedVault();
  document.getElementById("search-input").placeholder = lang ? `Search ${lang}` : "Pick a vault to search";
}

// Each history entry's place, counted from the page's first (history.state.pos; kept
// through a reload): the editor's "stay" goes back to its own entry (mayLeave).
function placeInHistory() {
  const pos = window.history.state?.pos;
  state.pos = typeof pos === "number" ? pos : (state.pos ?? -1) + 1; // (a new entry: after this one)
  if (pos !== state.pos) window.history.replaceState({ ...window.history.state, pos: state.pos }, "");
}

async function route() {
  if (!mayLeave()) return;
  placeInHistory();
  const [hashPath, query = ""] = location.hash.replace(/^#\/?/, "").split("?");
  const params = new URLSearchParams(query);
  const [lang, kind = "browse", ...rest] = hashPath.split("/");
  let path;
  try {
    path = rest.map(decodeURIComponent).join("/");
    if (lang && lang !== "status") state.lang = decodeURIComponent(lang);
    // a vault id is one name (a "/" in it, even as %2F, reached another vault's notes)
    if (lang && lang !== "status" && !(LANG.test(state.lang) && state.lang.length <= 35)) throw 0;
    if (path.split("/").some((part) => part === "." || part === "..")) throw 0;
  } catch {
    show(h("p", { class: "error", text: "This address is not well formed." }));
    document.body.dataset.ready = location.hash;
    return;
  }
  document.getElementById("vault-picker").value = state.lang || "";
  searchBoxSays();
  if (kind !== "search") document.getElementById("search-input").value = "";
  document.body.dataset.view = lang === "status" ? "status" : lang ? kind : "home";
  try {
    if (!state.status) await loadStatus();
    if (!lang) await home();
    else if (lang === "status") await statusView();
    else if (kind === "browse") await browse(state.lang, path);
    else if (kind === "search") await search(state.lang, params.get("q") || "");
    else if (kind === "note") await note(state.lang, path, params.get("version"), params.get("heading"));
    else if (kind === "edit") await edit(state.lang, path);
    else if (kind === "new") await edit(state.lang, null, path);
    else if (kind === "history") await history(state.lang, path);
    else show(h("p", { class: "error", text: "No such view." }));
  } catch (err) {
    show(errorBox(err));
  }
  say(state.flash || "");
  state.flash = "";
  const focus = state.focusNext;
  state.focusNext = null;
  focus?.()?.focus();
  document.body.dataset.ready = location.hash;
}

document.getElementById("vault-picker").addEventListener("change", (event) => {
  if (!event.target.value) return;
  const hash = `#/${encodeURIComponent(event.target.value)}`;
  if (mayGo(hash)) location.hash = hash;
  else event.target.value = state.lang || ""; // (stayed: the picker shows the vault edited)
});
askBeforeLinks();
document.getElementById("search-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const q = document.getElementById("search-input").value;
  const lang = searchedVault();
  if (lang) {
    const hash = `#/${seg(lang)}/search?q=${encodeURIComponent(q)}`;
    if (mayGo(hash)) location.hash = hash;
  } else {
    say("Pick the vault to search first (Vault, above).", "warn");
    document.getElementById("vault-picker").focus();
  }
});
window.addEventListener("hashchange", route);
window.addEventListener("beforeunload", (event) => {
  if (state.editing && state.editing.dirty()) event.preventDefault();
});
route();
