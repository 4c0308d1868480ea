// Vault memory's browser page: what every view uses (the REST API's client, DOM helpers).
// Rule of the page: text from the vault goes in through textContent only; the one
// exception is a note's HTML (htmlBlock), which the server has sanitized (nh3) and the
// page's Content-Security-Policy would stop from running script anyway.

const API = "/api/v1";
export const state = { status: null, features: {}, lang: null };
const view = document.getElementById("view");

// ---- HTTP ------------------------------------------------------------------------

export class ApiError extends Error {
  constructor(status, code, message, paths = []) {
    super(message);
    this.status = status;
    this.code = code;
    this.paths = paths; // (the vault paths its request named: errorBox lays them out)
  }
}

// The vault paths a request names (in its address, its ?path=, a JSON body's path and
// new_path): a refusal's words name them ("ملاحظات/2024/كتاب.md does not exist"), and
// errorBox shows them as pathName does, where the words were one right-to-left run.
const PATH_ROUTES = /^\/[^/?]+\/(?:notes|render|stat|head|history|diff|raw)\/([^?]+)/;
function pathsNamed(path, body) {
  const found = [];
  const inAddress = PATH_ROUTES.exec(path);
  if (inAddress) {
    try {
      found.push(inAddress[1].split("/").map(decodeURIComponent).join("/"));
    } catch {
      // (a malformed escape: the refusal is shown with its words as they are)
    }
  }
  found.push(new URLSearchParams(path.split("?")[1] || "").get("path"));
  if (body !== null && typeof body === "object") found.push(body.path, body.new_path);
  return found.filter((p) => typeof p === "string" && p !== "");
}

export async function api(method, path, { body, type, headers = {} } = {}) {
  const init = { method, headers: { ...headers }, credentials: "same-origin" };
  if (body !== undefined) {
    init.body = type === "json" ? JSON.stringify(body) : body;
    init.headers["Content-Type"] = type === "json" ? "application/json" : "text/markdown; charset=utf-8";
  }
  if (method === "DELETE") init.headers["X-Requested-With"] = "vault-memory-ui";
  let response;
  try {
    response = await fetch(API + path, init);
  } catch {
    // (the browser's own words were "Failed to fetch")
    throw new ApiError(0, "unreachable", "The indexer did not answer: is `indexer serve` still running? "
      + "Try again once it is.");
  }
  const data = response.status === 304 ? null : await response.json().catch(() => null);
  if (!response.ok) {
    const error = (data && data.error) || { code: "internal", message: response.statusText };
    throw new ApiError(response.status, error.code, error.message, pathsNamed(path, body));
  }
  return { data, etag: data && data.etag, status: response.status };
}

// One path segment of an API request. "." and ".." are refused here: the browser takes
// them as steps up even percent-encoded (a typed ../../ja/x.md saved into another vault).
export const LANG = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;
export function seg(s) {
  if (s === "." || s === ".." || s.includes("/")) throw new ApiError(403, "forbidden_path", "a path must not hold '.' or '..' segments");
  return encodeURIComponent(s);
}
export const enc = (path) => path.split("/").map(seg).join("/");
export const notePath = (lang, path) => `/${seg(lang)}/notes/${enc(path)}`;
const hashPath = (path) => path.split("/").map(encodeURIComponent).join("/");
export const link = (lang, kind, path = "") => `#/${encodeURIComponent(lang)}/${kind}/${hashPath(path)}`.replace(/\/$/, "");
// A folder's summary file: written by the indexer, read-only here, but its history
// (a hand edit the indexer wrote over) can be read and restored.
export const SUMMARY_FILE = ".overview.md";
export const isSummary = (path) => path.split("/").pop() === SUMMARY_FILE;

// ---- DOM -------------------------------------------------------------------------

export function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) {
      node.append(child instanceof Node ? child : String(child));
    }
  }
  return node;
}

export function show(...nodes) {
  view.replaceChildren(...nodes.filter((node) => node !== null && node !== undefined));
  window.scrollTo(0, 0);
}

// A notice: text, or text and nodes (a path's pathName) in a list.
export function say(message, kind = "ok") {
  const box = document.getElementById("message");
  box.replaceChildren(...[message].flat());
  box.className = kind;
  box.hidden = !box.textContent;
}

export function flash(message) {
  // Shown once the next view has loaded (a save or delete navigates away).
  state.flash = message;
}

// Where the keyboard's focus goes once the next view has loaded (route calls it): a
// save, restore or delete moves to another view, and the focus fell to the page's body,
// a keyboard user's place lost (the next Tab started again at the top).
export function focusNext(find) {
  state.focusNext = find;
}

// The first of a note view's actions (Edit; History for a folder summary, which has no
// Edit), where the focus goes after a save or a restore.
export const noteActions = () => document.querySelector("#view > .actions :is(a, button)");

// a > b in the order of their code points (Python's, the server's listing order; JS's
// own < compares UTF-16 units, and a name with an emoji sorted before one with 丽).
export function codePointsAfter(a, b) {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i += 1) {
    if (x[i] !== y[i]) return x[i].codePointAt(0) > y[i].codePointAt(0);
  }
  return x.length > y.length;
}

// The command that opens this page (logged in), for this workspace as the status named
// it, quoted for a POSIX shell: the page said "--workspace W", a word to work out.
function openCommand() {
  const ws = state.status?.workspace;
  const word = typeof ws !== "string" || !ws ? "W" : /^[\w./@%+=:,-]+$/.test(ws) ? ws : `'${ws.replaceAll("'", "'\\''")}'`;
  return h("code", { class: "open-command" }, "indexer open --workspace ", pathName(word)); // (folder by folder)
}

export function errorBox(err) {
  if (err instanceof ApiError && err.status === 401 && state.editing) {
    // (the login ended while editing: reopening the page in this tab dropped the typed
    // text, while a login in another tab gives this one its cookie back)
    return h("div", { class: "error" }, h("strong", { text: "Login needed. " }),
      "Not saved: your text is still in the editor. Log in again in another tab with ",
      openCommand(), ", then save here again.");
  }
  if (err instanceof ApiError && err.status === 401) {
    // (a restarted indexer's sessions are new: this tab's cookie is no longer one)
    return h("div", { class: "error" }, h("strong", { text: "Login needed. " }),
      "Open the page again with ", openCommand(), " (after the indexer starts again, its login is new).");
  }
  if (err instanceof ApiError && err.status === 0) {
    // An indexer started again listens on a new port unless given --port: this address
    // never answers again, and "try again" alone led nowhere.
    return h("div", { class: "error" }, h("strong", { text: "unreachable: " }), err.message,
      " If it was started again, it may be at a new address: open the page with ", openCommand(),
      state.editing ? " (in another tab: your text is still in this editor, not saved; copy it over)." : ".");
  }
  const code = err instanceof ApiError ? err.code : "error";
  return h("div", { class: "error" }, h("strong", { text: `${code}: ` }), withPaths(String(err.message ?? ""), err.paths || []));
}

export function crumbs(lang, path, last) {
  const parts = path ? path.split("/") : [];
  const items = [h("a", { href: `#/${seg(lang)}`, text: lang })];
  parts.forEach((part, i) => {
    const sub = parts.slice(0, i + 1).join("/");
    const isLast = i === parts.length - 1 && last;
    items.push(" / ", isLast ? h("span", { text: part }) : h("a", { href: link(lang, "browse", sub), text: part }));
  });
  return h("nav", { class: "crumbs" }, items);
}

// A vault path shown whole, each folder's name a bidi island in the page's direction (as
// the crumbs' are): "ملاحظات/2024/كتاب.md" was one right-to-left run, its file name at
// the left and ".md" after the first folder's name. An isolate around the whole path
// changes nothing inside it. Its text is the path's, unchanged; in a link, the link's.
export function pathName(path, cls = "") {
  return h("span", { class: cls ? `path-name ${cls}` : "path-name" },
    path.split("/").flatMap((part, i) => [i ? "/" : null, h("span", { text: part })]));
}

// A vault path in a plain string, for a confirm() dialog (no markup there): each folder's
// name and the file's name between LRI and PDI (U+2066, U+2069), islands left to right
// as pathName's are. "Delete ملاحظات/2024/كتاب.md?" was one right-to-left run, the file
// name at the left and ".md" after the first folder. (FSI would lay "كتاب.md" out right
// to left, its ".md" at the left beside the "/".) A path with no right-to-left character
// (no character of those blocks, where every R, AL and AN character is) reads in order as
// it is and stays as it is, not a character added.
const RIGHT_TO_LEFT = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF\u{10800}-\u{10FFF}\u{1E800}-\u{1EFFF}]/u;
export const hasRightToLeft = (text) => RIGHT_TO_LEFT.test(text);
export function pathText(path) {
  if (!hasRightToLeft(path)) return path;
  return path.split("/").map((part) => `\u2066${part}\u2069`).join("/");
}

// An error of the page's own whose words name vault paths (errorBox lays them out).
export class PathError extends Error {
  constructor(message, paths) {
    super(message);
    this.paths = paths;
  }
}

// A message's words, each of ``paths`` in them laid out by pathName where it stands as a
// word of its own (the longest first: one that holds another is a path of its own; a
// folder "e" is not every "e" of the words). Its text is the message's, unchanged.
const literally = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
export function withPaths(text, paths) {
  const [first, ...rest] = [...new Set(paths)].sort((a, b) => b.length - a.length);
  if (!first) return text ? [text] : [];
  const alone = new RegExp(`(?<![\\p{L}\\p{N}\\p{M}])${literally(first)}(?![\\p{L}\\p{N}\\p{M}])`, "u");
  return text.split(alone).flatMap((piece, i) => [...(i ? [pathName(first)] : []), ...withPaths(piece, rest)]);
}

export function value(v) {
  if (Array.isArray(v)) return v.map((x) => (typeof x === "object" ? JSON.stringify(x) : String(x))).join(", ");
  if (v !== null && typeof v === "object") return JSON.stringify(v);
  return String(v);
}

export function propertiesTable(properties) {
  // A list's items each a bidi island: one tag's unclosed U+202E reversed the others.
  const cell = (v) => (Array.isArray(v)
    ? h("td", {}, v.flatMap((x, i) => [i ? ", " : null, h("span", { class: "item", text: value(x) })]))
    : h("td", { text: value(v) }));
  const rows = Object.entries(properties).map(([k, v]) => h("tr", {}, h("th", { text: k }), cell(v)));
  return rows.length ? h("table", { class: "properties" }, h("tbody", {}, rows)) : null;
}

export const plural = (n, word) => `${n.toLocaleString("en")} ${word}${n === 1 ? "" : "s"}`;

export function htmlBlock(html, cls) {
  // The only place HTML enters the page: sanitized on the server, and CSP-confined.
  const node = h("article", { class: cls });
  node.innerHTML = html;
  return node;
}

// A long text in a <pre> (a note shown as plain text, the one on disk in a conflict), in
// blocks of lines that Chromium lays out only once they near the screen (app.css: .lines,
// content-visibility): a 1 MB note of Latin, Hebrew and Chinese was laid out whole, 5-8 s
// on the way from Save to the note view (most of it shaping text no one saw yet). The
// blocks are the text's own slices, each ending at a line break: its text is unchanged.
const LINES_A_BLOCK = 100;

export function fillLines(pre, text) {
  const blocks = [];
  for (let at = 0; at < text.length;) {
    let end = at;
    let lines = 0;
    while (lines < LINES_A_BLOCK && end < text.length) {
      const next = text.indexOf("\n", end);
      end = next < 0 ? text.length : next + 1;
      lines += 1;
    }
    const block = h("span", { class: "lines", text: text.slice(at, end) });
    block.style.setProperty("--lines", String(lines)); // (its height while skipped)
    blocks.push(block);
    at = end;
  }
  if (blocks.length > 1) pre.replaceChildren(...blocks);
  else pre.textContent = text; // (a short text: one text node, as it was)
  return pre;
}

// Nodes of one line each (a diff's), put in blocks of lines laid out as fillLines's are:
// a 1 MB note's diff with every line changed was 33,000 lines laid out at once, 33-36 s.
export function inBlocks(lines) {
  if (lines.length <= LINES_A_BLOCK) return lines;
  const blocks = [];
  for (let at = 0; at < lines.length; at += LINES_A_BLOCK) {
    const some = lines.slice(at, at + LINES_A_BLOCK);
    const block = h("span", { class: "lines" }, some);
    block.style.setProperty("--lines", String(some.length));
    blocks.push(block);
  }
  return blocks;
}

export function clearErrors() {
  view.querySelectorAll(":scope > .error").forEach((old) => old.remove());
}

export function fail(err) {
  clearErrors();
  view.prepend(errorBox(err));
}
