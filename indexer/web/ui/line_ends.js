// Vault memory's browser page: a file's own line breaks kept through the editor.
// A textarea holds every line break as LF (HTML reads CRLF and a lone CR as LF), so a text
// file with Windows line breaks came back from any edit with LF everywhere: each of its
// lines changed on disk, in its history's diff and for the program that wrote it. (Notes,
// .md, are LF on disk anyway: the server normalizes them. This is for .txt, .json, .csv...)

const BREAK = /\r\n|\r|\n/g;

// A text's lines and the break after each (one fewer: the last line has none).
function split(text) {
  const lines = [];
  const ends = [];
  let at = 0;
  for (const match of text.matchAll(BREAK)) {
    lines.push(text.slice(at, match.index));
    ends.push(match[0]);
    at = match.index + match[0].length;
  }
  lines.push(text.slice(at));
  return { lines, ends };
}

// The break a text uses most (LF when it has none, or on a tie with LF).
function commonest(ends) {
  const counts = new Map();
  for (const end of ends) counts.set(end, (counts.get(end) || 0) + 1);
  let best = "\n";
  for (const [end, n] of counts) if (n > (counts.get(best) || 0)) best = end;
  return best;
}

// The editor's text (LF only) with the line breaks of the text it was opened with: the
// lines before and after the edited part keep their own breaks (a file of mixed breaks
// changes only where it was edited), and the edited part takes the file's commonest.
// Linear in the text's length: one pass from each end, no diff.
export function withLineEnds(original, edited) {
  if (!original.includes("\r")) return edited; // (LF already: the textarea's own)
  const old = split(original);
  const lines = edited.split("\n");
  const n = lines.length;
  const m = old.lines.length;
  let head = 0;
  while (head < n && head < m && lines[head] === old.lines[head]) head += 1;
  let tail = 0;
  while (tail < n - head && tail < m - head && lines[n - 1 - tail] === old.lines[m - 1 - tail]) tail += 1;
  const usual = commonest(old.ends);
  const parts = [];
  for (let i = 0; i < n; i += 1) {
    parts.push(lines[i]);
    if (i === n - 1) break;
    const j = i - n + m; // (line i's place in the original, counted from its end)
    const end = i < head ? old.ends[i] : i >= n - tail - 1 && j >= 0 ? old.ends[j] : undefined;
    parts.push(end ?? usual);
  }
  return parts.join("");
}
