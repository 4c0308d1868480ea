"""Note texts that try to run script in the page; each sets ``window.__pwned`` or
opens a dialog if it ever runs. Shared by the renderer's and the browser's tests."""

from __future__ import annotations

HOSTILE = {
    "script": "<script>window.__pwned = 'script'</script>",
    "img-onerror": '<img src="x" onerror="window.__pwned = \'onerror\'">',
    "md-javascript-link": "[click me](javascript:window.__pwned='mdlink')",
    "html-javascript-link": "<a href=\"JaVaScRiPt:window.__pwned='alink'\">click me</a>",
    "entity-javascript-link": '<a href="&#106;avascript:alert(1)">entity</a>',
    "svg-onload": "<svg onload=\"window.__pwned = 'svg'\"><circle r='1'/></svg>",
    "iframe": "<iframe src=\"javascript:window.__pwned='iframe'\"></iframe>",
    "iframe-srcdoc": '<iframe srcdoc="<script>parent.__pwned=1</script>"></iframe>',
    "object-embed": '<object data="javascript:alert(1)"></object><embed src="x.swf">',
    "style-tag": "<style>body { display: none }</style>",
    "style-attr": '<div style="background:url(javascript:alert(1))" onclick="x()">styled</div>',
    "data-link": '<a href="data:text/html,<script>alert(1)</script>">data</a>',
    "meta-refresh": '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    "form": '<form action="/api/v1/en/notes/x.md"><input name="a"><button>go</button></form>',
    "mathml": '<math><mi xlink:href="javascript:alert(1)">m</mi></math>',
    "base": '<base href="http://evil.example/">',
    "details-ontoggle": (
        "<details open ontoggle=\"window.__pwned='toggle'\"><summary>s</summary></details>"
    ),
    "autofocus": "<input autofocus onfocus=\"window.__pwned='focus'\">",
    "body-onload": "<body onload=\"window.__pwned='body'\">",
}
