"""Characters a reader takes for the letters of recall's delimiter, and for its signs.

Recall defuses a line that names its block however it is spelled (``recall._skeleton``):
these are read as the Latin letter (or ``<``, ``/``) they are drawn like. Taken from
Unicode's confusables (UTS #39, ``confusables.txt``: every character whose prototype is
one of ``a c e l m o r t u v y < /``, ``I`` and ``1`` counted as ``l``, the letters
confusable with a sign drawn as ``<``: ``く`` with ``❬``, and every character whose
prototype is a dash, a low line or a space, or ``ー``, the long dash: ``ᅳ``, ``ߺ``, read
between the name's words as the separator they are drawn like), with the small
capitals (``ᴀ`` is confusable with a Cherokee letter there, not with ``a``) and a few
Greek and Cyrillic letters close enough in most fonts (``μ``, ``т``, ``ε``), and the
angle brackets and quotes a reader may take for ``<`` (``«``, ``⟨``, ``❬``).
"""

from __future__ import annotations

# the letter (or sign) -> the characters drawn like it
CONFUSABLE: dict[str, str] = {
    "a": "ɑΑαАаᎪᗅᴀ⍺ꓮ𐊠𖽀𝚨𝛂𝛢𝛼𝜜𝜶𝝖𝝰𝞐𝞪",
    "c": "ϲϹСсᏟᴄⲤⲥꓚꮯ𐊢𐌂𐐕𐐽𐔜𑣩𑣲🝌",
    "e": "ΕЕеҽᎬᴇ℮⋿ⱻⴹꓰꬲ𐊆𑢦𑢮𝚬𝛦𝜠𝝚𝞔",
    "l": "ƖǀʟΙІӀ۱Ꮮᒪᛁ∣⏽ⲒⳐⵏꓡꓲ￨𐊊𐌉𐌠𐐛𐔦𑢣𑢲𖼖𖼨𝈪𝚰𝛪𝜤𝝞𝞘",
    "m": "ΜϺМᎷᗰᛖᴍⲘꓟꟺ𐊰𐌑𝚳𝛭𝜧𝝡𝞛",
    "o": "ΟοσОоՕօ۵०০੦૦ଠ୦௦ం౦ಂ೦ംഠ൦ං๐໐ဝ၀ჿዐᴏᴐᴑⲞⲟⵔ〇ꓳꬽ𐊒𐊫𐐄𐐬𐓂𐓪𐔖𑓐𑢵𑣈𑣗𑣠𝚶𝛐𝛔𝛰𝜊𝜎𝜪𝝄𝝈𝝤𝝾𝞂𝞞𝞸𝞼",
    "r": "ƦʀʁгᎡᏒᖇᴙᴚᴦⲅꓣꭇꭈꮁ𐒴𖼵𝈖",
    "t": "ΤТᎢᴛ⊤⟙Ⲧꓔ𐊗𐊱𐌕𑢼𖼊𝚻𝛵𝜯𝝩𝞣🝨",
    "u": "ʋυՍսሀᑌᴜ∪⋃ꓴꞟꭎꭒ𐓎𐓶𑢸𑣘𖽂𝛖𝜐𝝊𝞄𝞾",
    "v": "νѴѵ۷Ꮩᐯᴠ∨⋁ⴸꓦꛟꮩ𐔝𑜆𑢠𑣀𖼈𝈍𝛎𝜈𝝂𝝼𝞶",
    "y": "ɣʏΥγϒУуҮүყᎩᎽᶌỿℽⲨꓬꭚ𐊲𑢤𑣜𖽃𝚼𝛄𝛶𝛾𝜰𝜸𝝪𝝲𝞤𝞬",
    "<": "˂ᐸᚲ‹❮𝈶く𡿨",
    "/": "᜵⁁⁄∕╱⟋⧸Ⳇ⼃〳ノ㇓丿𝈺",
    "-": "‐‑‒–﹘۔⁃˗−➖ⲻⲺ－—―─━㇐ꟷᅳㅡ一⼀",
    "_": "ߺ﹍﹎﹏",
    " ": "\u2028\u2029\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u205f\u00a0\u202f",
}  # fmt: skip
CLOSE_ENOUGH: dict[str, str] = {
    "e": "ε", "h": "һҺ", "i": "іι", "k": "κΚ", "l": "ӏ", "m": "μм", "p": "рРρΡ",
    "t": "τт", "x": "хХ", "<": "ㄑ«⟨〈《❬❰⦑⧼⟪⟬≺⊰⋖≪◁⊲⩽˱⋘⪪⧀⫷ᐊ",
    "-": "ー",  # the long dash (the prototype of ㅡ, 一 and —): a letter, between words
}  # fmt: skip


def look_alikes() -> dict[str, str]:
    """Each look-alike -> the letter or sign it is read as."""
    table = {}
    for latin, drawn in (*CONFUSABLE.items(), *CLOSE_ENOUGH.items()):
        for char in drawn:
            table[char] = latin
    return table
