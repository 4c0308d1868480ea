// The login page's one job: the one-time code `indexer open` put in this URL's fragment
// (a fragment never reaches a server, a log or a Referer) is posted to /ui/login, which
// answers with the session cookie; then the page opens, by this origin's own navigation,
// so the SameSite=Strict cookie goes with it.
"use strict";

(async () => {
  const code = new URLSearchParams(location.hash.slice(1)).get("code") || "";
  history.replaceState(null, "", location.pathname); // (the code leaves the address bar)
  const say = (title, text) => {
    document.title = title;
    document.querySelector("h1").textContent = title;
    document.querySelector("p").textContent = text;
  };
  if (!code) {
    say("No login code", "Run `indexer open --workspace W` to log this browser in.");
    return;
  }
  try {
    const answer = await fetch("/ui/login", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ code }),
      credentials: "same-origin",
    });
    if (answer.ok) {
      location.replace("/ui/");
      return;
    }
  } catch (err) {
    say("Login failed", `The indexer did not answer (${err}). Is it still running?`);
    return;
  }
  say(
    "This login link has expired",
    "A login link works once, for a minute. Run `indexer open --workspace W` again.",
  );
})();
