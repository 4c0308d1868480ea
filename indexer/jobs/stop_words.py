"""Stop words of the languages written with spaces, for recall's keywords (``keywords``).

A question's function words (where, what, my, is, of, and) match nearly every note of
its language: looking them up is slow in a large vault, and a note holding only ``saya``
or ``của`` many times was quoted before the one about the cat. Each list holds question
words, personal and possessive pronouns, copulas and the most common prepositions,
conjunctions and articles of one language, and nothing more.

The set is one for every language, since a question does not say which it is in: a word
another language uses as a content word recall must find (English ``go``, ``jest``,
``min``, ``mint``; Portuguese ``dia``, day; French ``l'IA``; German ``Ei``, egg;
Vietnamese ``sen``, lotus; Spanish ``cine``; names such as Kim, Hans, Yang, Meg) is no
stop word of that set but an ambiguous one, in a second list beside its language's
(``AMBIGUOUS_LISTS``): a stop word only where the question's other stop words show it is
in that language (``question_language``: Swedish ``Var är min katt?`` drops ``var`` and
``min``, English ``what is the min value of var x`` keeps them). A word its own language
asks about too (Vietnamese ``từ``, word; Swedish ``vår``, spring; Polish ``pod``, a
Kubernetes pod) is in neither list. Each list's comment names its ambiguous words and why.
A stop word of these lists that a Vietnamese question writes as a word of its own (``di``
of ``di động``, mobile; ``ti vi``; ``máy in``, printer) stays in one
(``question_language``). The lists of the scripts other than Latin, Cyrillic and Greek
are in ``stop_words_scripts``.
"""

from __future__ import annotations

import unicodedata

from indexer.jobs.stop_words_scripts import SCRIPT_AMBIGUOUS_LISTS, SCRIPT_LISTS
from shared.reader_folds import FORMAT_RUNS

_EN = """a about above after again against all also am an and any are aren't as at be
because been before being below between both but by can can't cannot could couldn't did
didn't do does doesn't doing don't down during each few for from further had has have
having he her here hers herself him himself his how i i'm if in into is isn't it it's its
itself just let's me more most my myself no nor not now of off on once only or other our
ours ourselves out over own same she should so some such than that that's the their theirs
them themselves then there these they this those through to too under until up very was
we were what when where which while who whom why will with would you your yours yourself
yourselves tell know remember recall please thanks thank last ago anything something
everything did say said mention mentioned talk talked discuss discussed think thought
get got give gave make made want wanted like us ok okay yes yeah also again still"""
# Ambiguous: cela (Portuguese, cell), pendant, aura, font, tel (English), sera (Italian,
# evening), telle (Norwegian, count)
# Also ambiguous, English words too: son, car, sans (English: a son, a car, sans-serif)
_FR = """le la les un une des du de d l et ou mais donc or ni que qui quoi dont où
ce cet cette ces mon ma mes ton ta tes sa ses notre nos votre vos leur leurs je tu il
elle on nous vous ils elles me te se lui y en au aux avec pour par dans sur sous chez
est sont été être avoir a ai as avons avez ont fait faire pas ne plus très bien aussi
comme quand comment pourquoi quel quelle quels quelles combien c'est j'ai qu'est-ce
à ça ceci celà ceux celle celles celui chaque contre depuis derrière devant dès durant
entre envers hors malgré parmi selon voici voilà alors après avant puis lorsque puisque
parce quoique moi toi soi eux aucun aucune autre autres même mêmes suis sommes êtes
était étaient étais étant serait soit avait avaient avais aurait vont va vais vas ici
lequel laquelle lesquels lesquelles duquel auquel auxquels tout tous toute toutes rien
trop tant tels telles lors jusqu lorsqu puisqu quoiqu quelqu"""
_FR_AMBIGUOUS = "cela pendant sera aura font tel telle son car sans"
# German possessives as declined. Ambiguous: seine (the Seine), mir (peace in Croatian),
# dir (a directory), wen (a name), man, die, dies (English: can a dog die of it?), allen,
# anders (names), aller, dort, hier, ans (French), bis (Indonesian, bus), ins, jeden (one)
# Also ambiguous, English words too: den, hat, war, bin (English)
_DE = """der das dem des ein eine einer eines einem einen und oder aber doch
denn dass daß wer was wie wo wann warum welche welcher welches ich du er sie es wir ihr
mich dich sich uns euch mein dein sein ihr unser euer ist sind waren bist sein
haben hatte hatten habe wird werden wurde mit von zu zum zur im in an am auf aus bei
für über unter nach vor nicht kein keine noch auch nur schon sehr so als wenn ob
meine meinen meinem meiner meines deine deinen deinem deiner deines seinen seinem seiner
seines ihre ihren ihrem ihrer ihres unsere unseren unserem unserer unseres eure euren
eurem eurer wohin woher wieso weshalb wem ihm ihn ihnen kann kannst können beim vom
alle allem alles andere anderen dann darum daher damit dazu dessen diese diesem diesen
dieser dieses durch etwas gegen hinter indem jede jedem jeder jedes jene jetzt keinem
keinen keiner keines muss musste müssen nachdem nichts ohne seid selbst soll sollen
sollte sondern sonst weil werde wieder wirst wollen wollte während würde würden zwischen
aufs übers"""
_DE_AMBIGUOUS = (
    "seine mir dir wen man die allen aller anders bis dies dort hier ins jeden ans den hat war bin"
)
# Ambiguous: dime (tell me), soy, con (a con artist), sin (a sine), era, hay, ante, tan
# (English), bajo (low), todo (a to-do), algo, hasta (Turkish, ill), mía (Vietnamese,
# sugarcane), suya (Turkish, to water)
# Also ambiguous, English words too: son (English), del (a key, an operator)
_ES = """el la los las un una unos unas y o pero que qué quien quién cual cuál como
cómo cuando cuándo donde dónde cuánto cuánta cuántos cuántas por para sobre de al en
es fue ser estar está están he ha han yo tú él ella nosotros vosotros ellos ellas me
te se le lo les mi mis tu tus su sus nuestro muy más ya no sí también este esta estos
estas
hacia mediante según tras aunque porque pues sino mientras esa esas ese eso esos aquel
aquella aquellos aquellas aquello esto ustedes usted nosotras vosotras mío míos mías
tuyo tuya tuyos tuyas suyo suyos suyas nuestra nuestras nuestros vuestra vuestro eres
somos sois estoy estás estamos estaba estaban eran fueron sido será sería había habrá
hemos tengo tiene tienen tenía puede pueden puedo cuáles quiénes cuales quienes adónde
adonde cuanto cuanta cuantos cuantas aquí allí ahí allá acá así mucho mucha muchos
muchas otro otra otros otras cada mismo tanto aún todavía toda todos todas nada desde
durante entre contra"""
_ES_AMBIGUOUS = "dime soy con sin era hay ante bajo todo algo hasta mía suya tan son del"
# Ambiguous: num (in a; English), pro (for the; English), era, sob, todo, algo (English),
# pelo, pelos (Spanish, hair), dele, dela, neste (Nordic), pois (French, peas), seria
# (Italian, serious), ali (Ali), lá (Vietnamese, leaf), só (Hungarian, salt), tua
# (Indonesian, old)
_PT = """o a os as um uma uns umas e ou mas que quem qual como quando onde por para
com sem sobre de do da dos das no na nos nas em é são foi ser estar está estão eu tu
ele ela nós vós eles elas me te se lhe meu minha seu sua nosso muito mais já não sim
também este esta isso isto quanto quantos quantas
ao aos à às pela pelas numa numas nuns deles delas nele nela neles nelas nesta nestes
nestas nesse nessa nesses nessas nisso nisto naquele naquela daquele daquela deste desta
destes destas desse dessa disso disto aquele aquela aqueles aquelas aquilo essa esse
essas esses estes você vocês lhes meus minhas teu teus tuas seus suas nossa nossos
nossas vossa vosso até após entre desde durante contra perante porque porquê então
enquanto embora sou somos estou estamos estava estavam eram foram fui será tem têm tenho
temos tinha tinham há aqui aonde cadê quais toda todos todas tudo nada ainda"""
_PT_AMBIGUOUS = "num pro era pelo pelos todo algo dele dela neste sob pois seria ali lá só"
# Ambiguous: mia (a name), cosa (what; Spanish, thing), dove, con, era, col, ad, cos,
# quell, quest, sue, tue, fu (English), dell, nell, ed, li (names), sul (Portuguese,
# south), mai (French, May), verso (Spanish, verse), dalle (French, slabs), mie, tua, sia
# (Indonesian), ero (Finnish, difference), fosse (French, pit), hai (Vietnamese, two),
# sta, stai, sto, stava (Dutch, Romanian, Slavic, Swedish words)
# Also ambiguous, English words too: del (a key, an operator)
_IT = """il lo la i gli le un uno una e o ma che chi cui come quando perché per quale
quali quanto quanti quante senza su di della dei degli delle da dal dalla in nel
nella è sono essere ho ha abbiamo avete hanno io tu lui lei noi voi loro mi ti si ci vi
mio tuo suo nostro molto più già non sì anche questo questa quello quella
sulla sullo sulle sui sugli alla alle allo agli nei nello negli nelle dagli dallo dello
degl sull dall coi tra dopo contro sotto sopra dentro fuori mentre oppure però perciò
quindi allora dunque invece esso essa essi esse egli miei tuoi suoi nostra nostre nostri
vostra vostre vostri vostro questi queste quelli qualcosa qualcuno ogni tutto tutti
tutta tutte siamo siete siano erano eri avevo aveva avevano stanno qua lì dov"""
_IT_AMBIGUOUS = """mia cosa dove con era sul col ed ad li mai verso dalle cos dell nell quell mie
tua tue sue quest sia ero fosse fu hai sta stai sto stava del"""
# Ambiguous: men (one), hem (him), die (that), ben (am; English, and Ben), door, tot, hen
# (English), meer (German, sea), hier (French, yesterday), kan (Turkish, blood)
# Also ambiguous, English words too: van (English, a vehicle)
_NL = """hun de het een en of maar dat dit deze wie wat welke hoe hoeveel waar wanneer
waarom ik jij je hij zij ze wij we jullie mij mijn jouw zijn haar ons onze is was zijn
waren bent heb hebt heeft hebben hadden met voor in op aan bij uit naar over niet
geen ook nog wel al zo als dan
alles andere daar dus geweest iemand iets kon kunnen niets omdat onder tegen toch toen
uw veel werd worden wordt zal zelf zich zonder zou welk wiens jou"""
_NL_AMBIGUOUS = "men hem die ben door tot meer hen hier kan van"
# Ambiguous: co (Vietnamese, shrink), go, ale, ten, one, jest (English), oni (Japanese),
# ono, nam (Vietnamese, south), po (the river). Not at all: pod (a Polish question asks
# about Kubernetes' pods, lower-cased: ``Dlaczego pod się restartuje?``)
# Also ambiguous: nim (the Nim language), tam (Turkish, whole), ani (Romanian, years),
# nasi (Indonesian, rice), nimi (Finnish, name), poza (Romanian, photo)
_PL = """gdzie kiedy kto kogo komu czego czym dlaczego czemu jak jaki jaka jakie jakiego
który która które którego których czy ja ty on ona my wy mnie mi cię ciebie jego jej ich
nas was wam mój moja moje mojego mojej moich moim moją mojemu twój twoja twoje twojego
twojej twoich nasz nasza nasze naszego naszej naszych wasz wasza wasze swój swoja swoje
swojego swojej są był była było były być będzie będą lub albo oraz że we ze na do od
dla przy za nad przez się nie tak to ta te tego tej tym
aby bardzo bez bo bym choć coś czyli dokąd gdy gdyby gdyż gdzieś iż jakaś jakiś jako
jednak jeśli jeżeli jestem jeszcze już ją każdy ktoś której którym którzy lecz mają mam
mamy mimo między mną moi może można nami nawet nic nich niego niej niemu nią niż obok
ponieważ przed skąd sobie sobą także taki taka takie teraz też tobie tobą tutaj twoi
tych tylko tę wami wasi według więc wszyscy wszystko wtedy właśnie wśród zawsze zaś żeby"""
_PL_AMBIGUOUS = "co go ale ten one jest oni ono nam po nim tam ani nasi nimi poza"
# Ambiguous: co, ale, po, ten (as Polish's), pro (English), ano (Portuguese, year), tato
# (Portuguese, touch), toto (a name). Not at all: pod (as Polish's)
# Also ambiguous: pak (Dutch, suit), kam (Danish, comb), tom (Portuguese, tone), jim,
# jen, ji (names), má, tím (Vietnamese, mother, purple), tam, ani, nimi (as Polish's)
_CS = """kde kdy kdo proč jak jaký jaká jaké který která které čí já ty on ona my vy mě
mne mi tě tebe jeho její jejich můj moje moji mého mém mou tvůj tvoje tvého náš naše
našeho váš vaše svůj svoje jsou jsem jsi jsme byl byla bylo byli být bude nebo že ve se
na do od při za nad přes ke ze to ta ty tento tohle ne je
aby asi až bez během což další jako jenom jenž ještě jestli jí jich jimi již každý když
kolik kromě kvůli mezi mně mnou mám máme máte máš mají může musí než nic nich ní ním
něco někde někdo němu podle pokud potom pouze proti proto protože před tady také takže
tedy toho tomu tyto už vám vás více však všechno všichni zda zde či svá své svých svým"""
_CS_AMBIGUOUS = "co ale po ten pro ano tato toto pak kam tom jim má tam ani jen ji nimi tím"
_RU = """что чего чем как когда где куда откуда почему зачем кто кого кому какой какая
какие каком это этот эта эти тот та те то и а но или да нет не ни в во на с со к ко по о
об от до из за для при про у же ли бы был была были было быть есть мы вы я ты он она оно
они нас вас нам вам мне меня тебе него нее неё них ему ей им наш ваш мой твой его её их
свой так там тут уже еще ещё очень все всё весь вся сказал сказала говорили скажи
напомни помнишь насчет насчёт про моя моё мое мои моего моей моих моим мою моему твоя
твоё твое твои твоего твоей наша наше наши нашей нашего нашу ваша ваше ваши вашей вашего
своя своё свои своего своей свою который которая которое которые какое чей чья чьё чьи
будет этой этого этом себя себе сколько
без будто ведь вот всегда всего всех даже если здесь именно ими кем ком кроме лишь между
может ней ним ними потом после потому разве сам сама само сейчас также тоже тогда того
тем теперь только хотя чтобы чтоб эту этих этим этими нём нем мной тобой вами нами всю
всем всеми"""
# Ambiguous: ось (an axis in Russian)
_UK = """що як коли де чому хто який яка які це цей ця ці та й і але або ні на з із до
від для при про ми ви ти він вона воно вони нам вам мені його її наш ваш мій твій так
вже ще дуже все щодо моя моє мої мого моєї моїх мою моїй моєму твоя твоє твої твого
твоєї наша наше наші нашого нашої ваша ваше ваші свій своя своє свої свого своєї їхній
їхня їхнє їхні їх мене тебе нас вас куди звідки навіщо котрий чий чия яке якої якого був
була було були бути буде у в за над під між через то той те там тут я скільки
адже без більш всіх завжди майже навіть такий також хоча чи чого є інших якщо тому
тільки лише після перед біля йому їй ним нею ними собі щоб бо теж цього цієї цим цих
того тих"""
_UK_AMBIGUOUS = "ось"
# Ambiguous: kim (a name), sen (Vietnamese, lotus), sana (Italian, healthy), beni
# (Italian, goods), seni (Indonesian, art), ama, var (English), kimi (a name, a model),
# bana (Swedish, a track), ben (Ben)
# Also ambiguous: hem (Swedish, home), size (English), acaba (Spanish, ends), buna
# (Romanian, good), senden (German, send)
_TR = """nerede nereye nereden neresi nerde ne neyi neden niçin niye nasıl hangi hangisi
kaç kimin kime biz siz onlar benim senin onun bizim sizin onların ona onu bunu
şunu bunlar şunlar bu şu ve veya ile için de da ki mi mı mu mü midir mıdır değil yok
gibi daha çok
belki benden bizden bizi bize bunda bundan bunun diye hep hepsi hiç ise kimden ondan
onlardan onları sanki sizden sizi tüm yani çünkü şuna şunda şundan dahi ancak fakat
burada orada şurada buraya oraya misin mısın musun müsün miyim mıyım muyum müyüm"""
_TR_AMBIGUOUS = "kim sen sana beni seni ama var kimi bana ben hem size acaba buna senden"
# Single syllables that are function words only (ai, who: ``AI`` stays an acronym; ở,
# one character, is dropped anyway: here for when its marks are typed apart).
# Ambiguous: nó (Portuguese, knot), mà (Catalan, hand), cho (a name), kia (a car), tao
# (Chinese), con (the classifier of animals, and child; English, a con artist). Not at
# all, since a Vietnamese question asks about them too: bạn (also friend), anh (English,
# the language), chị, ông, bà, họ, mình, để (put: "để ở đâu"), từ (word), đến, về, sao
# (star), bao, giờ (hour), thế (thế giới, world), một
# Also ambiguous: hay (or; English), theo (a name)
_VI = """ai của tôi chúng là có được đã đang sẽ bị không này đó ấy thì các những rồi chưa
nhé vậy hả đâu ở gì nào khi nhiêu tại trong với và vì nhưng hoặc cái chiếc
bởi bằng cũng còn giữa hơn nếu nên như rằng rất trên dưới vào vẫn vừa đây đều mỗi cả
trước cùng nhau"""
_VI_AMBIGUOUS = "nó mà cho kia tao con hay theo"
# Indonesian and Malay. Ambiguous: ada (a language, a name), dia (Portuguese, day), ia
# (French, l'IA), yang (a name; yin and yang)
# Also ambiguous: sana (there; Turkish's), agar, pun (English), cuma (Turkish, Friday),
# demi (French, half), kok (Dutch, cook), kan (Turkish, blood)
_ID = """di dan apa apakah siapa siapakah mana manakah kapan bila bilakah mengapa kenapa
bagaimana berapa ke dari pada untuk dengan dalam oleh tentang kepada saya aku kamu anda
engkau kau awak kami kita mereka beliau ini itu adalah ialah sudah telah akan sedang
tidak tak bukan juga atau tetapi tapi
antara atas bagi bahwa bahawa belum bisa boleh dapat dulu harus hanya hingga jangan jika
kalau kalian karena kerana ketika lalu maka masih melalui mengenai meski meskipun
mungkin namun nanti padahal pernah pula saja sampai sangat sebab sebagai sebelum sejak
sekarang selama seperti serta sesudah setelah setiap sini situ supaya tanpa tersebut
yaitu lah agak"""
_ID_AMBIGUOUS = "ada dia ia yang sana agar cuma demi pun kok kan"
_EL = """πού που πότε ποτέ τι τί ποιος ποια ποιο ποιοι ποιες ποιον ποιας πώς πως γιατί
πόσο πόσα πόσοι είναι ήταν είμαι είσαι είμαστε έχω έχει έχουν θα να ο η το οι τα του
της των τον την τη ένα ένας μια μία και ή αλλά με σε στο στη στην στον στα στους στις
από για κατά μετά μου σου μας σας τους εγώ εσύ αυτός αυτή αυτό αυτά εμείς εσείς αυτοί
δεν μην ότι αν
όταν όπως όπου ποιου ποιων αυτού αυτής αυτών αυτόν αυτήν ενώ επειδή χωρίς μέχρι πριν
προς ως ούτε έχεις έχουμε έχετε είχε είστε"""
# Swedish, Danish, Norwegian (Bokmål, Nynorsk). Ambiguous: var, min, mine, dine, sine,
# sit, men, dig, ham, med, till, sig, seg (English), om (Romanian, man), hans, mina,
# dina, sina, meg (names), deg (degrees), ei (German, egg), kva (kVA). Not at all: vår
# (spring), vara (goods), since a Swedish question asks about them too
# Also ambiguous: mange (French, eats), ska, bland, sedan (English), mer, mot, ville,
# dette (French), vid (a video), disse (Portuguese, said), kunde (German, customer), kan
# Also ambiguous, English words too: den (English)
_NORDIC = """vad när vem vilken vilket vilka varför hur jag du hon han det vi ni de
mig honom henne oss er dem mitt ditt sitt vårt våra ert hennes deras är har hade och eller att som
på av för från en ett inte också hvor hvad hvornår hvem hvilken hvilket hvilke hvorfor
hvordan jeg hun hende hendes os mit dit vores jeres deres være havde og af til fra et
ikke også hvis hva når dere våre hadde ikkje kvar kven korleis kvifor eg vart at din
alla alle allt alltid andra annan annat bara blev bli blir bliver blive dess dessa detta
denna denne där därför då efter eftersom genom hos här igen ingen inget inga innan inom
kanske kunne mellan meget mycket många måste någon något några noget nogle nogen redan
samma själv selv skal skall skulle så sådan utan vil vill vars varje än även över upp ut"""
_NORDIC_AMBIGUOUS = """var min mine dine sine sit men dig ham med till sig seg om hans mina
dina sina
meg deg ei kva mange ska mer mot ville vid bland dette disse kan kunde sedan den"""
# Ambiguous: ei (German, egg), oli (Italian, oils), olla (Spanish, pot), tai (tai chi),
# vain (English)
# Also ambiguous: eli, jo (names), sen (as Turkish's), minut (Czech, Swedish, minute)
_FI = """missä mistä mihin mikä mitä mitkä milloin kuka ketkä kenen kenelle miksi miten
kuinka millainen minä sinä hän me te he minun sinun hänen meidän teidän heidän minulla
sinulla minua on ovat ole ja mutta että kun jos se ne tämä tuo nämä myös
ennen eikä ellei emme ette ettei ilman itse johon joka jonka jotka jossa josta jolla
kanssa koska kuin niin nyt sekä siellä täällä siitä sitä tätä tämän hänelle hänet häntä
heille heidät heitä minulle sinulle sinut meille teille vielä vaan olen olet olemme
olette ollut olisi"""
_FI_AMBIGUOUS = "ei oli olla tai vain eli sen jo minut"
# Ambiguous: care, sale, tale, mine (English), cine (Spanish, cinema), nu (French,
# naked), cu (copper), ca (calcium; Catalan, dog), fi (wi-fi), dar (Portuguese, give),
# mele (Italian, apples), mei (Chinese), ei (German, egg), era (English)
# Also ambiguous: mai (French, May), deja (Spanish, leaves), ar (argon), ale, tot (as
# Polish's, Dutch's), alt, alte (English, German), acele (Turkish, hurry), cel, cele
# (Polish, goal), doar (Portuguese, donate), fara (Swedish, danger), peste (plague)
_RO = """unde ce când cand cum cât câte eu tu el ea noi voi ele tine meu mea tău ta
său sa nostru noastră vostru voastră lor este sunt fost al ai am au și şi sau că
în la pe din de spre pentru despre un unui unei da acest această aceasta acesta asta acel acea
acolo acum aici apoi asupra atunci acei aceia acestea acestei acestui ăsta ăla aia avea
avem aveți va cea cei celor ceva cineva cărei căror căruia căreia căci dacă daca deci
decât după dupa fără foarte iar însă insa între intre nici nimic numai prin suntem sînt
toate toți totul totuși vreo vreun îmi îți își îi mă să fie câți"""
_RO_AMBIGUOUS = """care sale tale mine cine nu cu ca fi dar mele mei ei era mai deja ar ale alt tot
acele cel cele doar fara peste alte"""
# Ambiguous: kit, volt, mint (English), meg (a name)
# Also ambiguous: ami (French, friend), ellen, amit (names), mert (Turkish, brave),
# voltam (Portuguese, they return)
# Also ambiguous, English words too: van (English, a vehicle)
_HU = """hol hová hova honnan mi mit mikor ki kinek miért hogyan hogy melyik milyen mennyi
én te ők ti engem téged nekem neked az egy és vagy de hanem is vannak lesz nem ez
ezt azt ezek azok már csak még nincs vagyok
abban ahhoz ahogy ahol aki akik akkor alatt amely amelyek amelyet amelynek amikor amíg
annak arra arról azon azonban aztán azért benne bár ebben eddig ehhez ekkor ennek erre
ezen ezzel ezért hiszen illetve ilyen itt kell között mellett mindig minden mivel míg
neki olyan ott pedig szerint tehát valaki valami vagyis vele volna voltak által így úgy
után"""
_HU_AMBIGUOUS = "kit volt mint meg ami ellen amit mert voltam van"
# Ambiguous: nani (Italian, dwarfs), mimi, sisi, yao, hadi (names), wake, lake, vile
# (English), cha (Vietnamese, father), kuna (a currency), kama (Finnish, stuff), pia
# (Portuguese, a sink; Finnish, soon), hata, ili (Turkish, error, province), kabla
# (Polish, cable), kati, sasa (names), ipo (English, an IPO), hao (Vietnamese, waste),
# nao (Portuguese, not), kila (Czech, kilos), chao (ciao), letu
# (Czech, flight), lao (Lao), zao (Croatian, evil), kile (Croatian), hiki (Finnish, sweat).
# Not at all: basi (also a bus)
_SW = """wapi nini lini vipi gani je wewe yeye ninyi wao wangu wako wetu wenu yangu yako
yake yetu yenu changu chako chake langu lako zangu zako zake ni na ya wa za kwa katika
kutoka lakini huyu hii hiyo hapa
kwamba baada juu chini ndani nje pamoja kuwa yupo huo hizo huyo yule hicho hivi hivyo
tena ndiyo hapana ngapi naye nawe wote zaidi alikuwa ilikuwa walikuwa kwenye zetu zenu
chetu chenu lenu"""
_SW_AMBIGUOUS = """nani mimi sisi yao hadi wake lake cha kuna kama pia hata ili kabla kati sasa
ipo hao vile nao kila chao letu lao zao kile hiki"""
LISTS: dict[str, str] = {
    "en": _EN,
    "fr": _FR,
    "de": _DE,
    "es": _ES,
    "pt": _PT,
    "it": _IT,
    "nl": _NL,
    "pl": _PL,
    "cs": _CS,
    "ru": _RU,
    "uk": _UK,
    "tr": _TR,
    "vi": _VI,
    "id": _ID,
    "el": _EL,
    "sv-da-no": _NORDIC,
    "fi": _FI,
    "ro": _RO,
    "hu": _HU,
    "sw": _SW,
    **SCRIPT_LISTS,
}
# Stop words only in a question that shows its language (``question_language``)
AMBIGUOUS_LISTS: dict[str, str] = {
    "fr": _FR_AMBIGUOUS,
    "de": _DE_AMBIGUOUS,
    "es": _ES_AMBIGUOUS,
    "pt": _PT_AMBIGUOUS,
    "it": _IT_AMBIGUOUS,
    "nl": _NL_AMBIGUOUS,
    "pl": _PL_AMBIGUOUS,
    "cs": _CS_AMBIGUOUS,
    "uk": _UK_AMBIGUOUS,
    "tr": _TR_AMBIGUOUS,
    "vi": _VI_AMBIGUOUS,
    "id": _ID_AMBIGUOUS,
    "sv-da-no": _NORDIC_AMBIGUOUS,
    "fi": _FI_AMBIGUOUS,
    "ro": _RO_AMBIGUOUS,
    "hu": _HU_AMBIGUOUS,
    "sw": _SW_AMBIGUOUS,
    **SCRIPT_AMBIGUOUS_LISTS,
}


def _words(text: str) -> frozenset[str]:
    # (in NFC: Vietnamese typed with combining tone marks, Bengali's য় as two characters;
    # without the invisible characters keywords drops before reading them: Persian's ZWNJ)
    return frozenset(
        FORMAT_RUNS.sub("", unicodedata.normalize("NFC", word)) for word in text.split()
    )


_LISTED = {lang: _words(text) for lang, text in LISTS.items()}
# Each language's ambiguous words (``question_language.shown_stops`` reads them)
AMBIGUOUS_OF = {lang: _words(text) for lang, text in AMBIGUOUS_LISTS.items()}
STOP_WORDS = frozenset(word for words in _LISTED.values() for word in words)
AMBIGUOUS = frozenset(word for words in AMBIGUOUS_OF.values() for word in words)
_NONE: frozenset[str] = frozenset()


def _lists_of() -> dict[str, list[str]]:
    """Each stop word's lists (``de``: French, Spanish, Dutch, Nordic...)."""
    lists: dict[str, list[str]] = {}
    for lang, listed in _LISTED.items():
        for word in listed:
            lists.setdefault(word, []).append(lang)
    return lists


LISTS_OF = _lists_of()


def is_stop(word: str, shown: frozenset[str] = _NONE) -> bool:
    """Whether the lower-cased ``word`` is a stop word, however its accents are encoded;
    an ambiguous one only among ``shown`` (``question_language.shown_stops``)."""
    if word in STOP_WORDS or word in shown:
        return True
    if word.isascii():
        return False
    word = unicodedata.normalize("NFC", word)
    return word in STOP_WORDS or word in shown
