"""The words of maintenance without a model (``maintenance_extract``): its files'
titles and sections in a vault's language, and the tags that send an entry to them.

A model writes USER.md and PROJECT.md in the vault's language (the prompts say so); the
path without one names its titles and sections in the languages below and in English
elsewhere. A file's English headings are still found in any vault (one made before its
language was here, or by a person), so no section is made twice."""

from __future__ import annotations

from collections.abc import Callable

from shared.langs import language_of, writes_traditional_chinese
from shared.reader_folds import tag_key

# The files' titles and sections, in the order a new file has them
TITLES = {"user_profile": "User profile", "project_review": "Project"}
SECTIONS = {
    "user_profile": ("Preferences", "Level and background", "Habits", "About"),
    "project_review": ("Goals", "Active threads", "Decisions", "Facts", "Done"),
}
_NAMES = (
    "User profile", "Preferences", "Level and background", "Habits", "About",
    "Project", "Goals", "Active threads", "Decisions", "Facts", "Done",
)  # fmt: skip
# Each language's names, in ``_NAMES``' order (a language tag's first subtag: ``pt-BR``).
_LOCAL_NAMES = {
    "zh": "用户画像|偏好|水平与背景|习惯|关于|项目|目标|进行中|决定|事实|已完成",
    "zh-Hant": "用戶畫像|偏好|水平與背景|習慣|關於|項目|目標|進行中|決定|事實|已完成",
    "ja": "ユーザープロフィール|好み|レベルと背景|習慣|について|プロジェクト|目標|進行中"
    "|決定事項|事実|完了",
    "ko": "사용자 프로필|선호|수준과 배경|습관|소개|프로젝트|목표|진행 중|결정 사항|사실|완료",
    "fr": "Profil utilisateur|Préférences|Niveau et parcours|Habitudes|À propos|Projet"
    "|Objectifs|En cours|Décisions|Faits|Terminé",
    "de": "Benutzerprofil|Vorlieben|Kenntnisstand und Hintergrund|Gewohnheiten|Persönliches"
    "|Projekt|Ziele|Laufende Themen|Entscheidungen|Fakten|Erledigt",
    "es": "Perfil de usuario|Preferencias|Nivel y experiencia|Hábitos|Acerca de|Proyecto"
    "|Objetivos|En curso|Decisiones|Hechos|Terminado",
    "pt": "Perfil do usuário|Preferências|Nível e formação|Hábitos|Sobre|Projeto|Objetivos"
    "|Em andamento|Decisões|Fatos|Concluído",
    "it": "Profilo utente|Preferenze|Livello e formazione|Abitudini|Informazioni|Progetto"
    "|Obiettivi|In corso|Decisioni|Fatti|Completato",
    "nl": "Gebruikersprofiel|Voorkeuren|Niveau en achtergrond|Gewoonten|Over|Project|Doelen"
    "|Lopend|Beslissingen|Feiten|Afgerond",
    "pl": "Profil użytkownika|Preferencje|Poziom i doświadczenie|Nawyki|O użytkowniku"
    "|Projekt|Cele|W toku|Decyzje|Fakty|Zrobione",
    "ru": "Профиль пользователя|Предпочтения|Уровень и опыт|Привычки|О пользователе|Проект"
    "|Цели|В работе|Решения|Факты|Сделано",
    "uk": "Профіль користувача|Уподобання|Рівень і досвід|Звички|Про користувача|Проєкт"
    "|Цілі|У роботі|Рішення|Факти|Зроблено",
    "ar": "ملف المستخدم|التفضيلات|المستوى والخلفية|العادات|نبذة|المشروع|الأهداف|قيد التنفيذ"
    "|القرارات|الحقائق|منجز",
    "he": "פרופיל משתמש|העדפות|רמה ורקע|הרגלים|אודות|פרויקט|מטרות|בתהליך|החלטות|עובדות|הושלם",
    "fa": "نمایه کاربر|ترجیحات|سطح و پیشینه|عادت‌ها|درباره|پروژه|اهداف|در جریان|تصمیم‌ها"
    "|واقعیت‌ها|انجام‌شده",
    "tr": "Kullanıcı profili|Tercihler|Düzey ve geçmiş|Alışkanlıklar|Hakkında|Proje|Hedefler"
    "|Devam edenler|Kararlar|Olgular|Tamamlananlar",
    "vi": "Hồ sơ người dùng|Sở thích|Trình độ và nền tảng|Thói quen|Giới thiệu|Dự án|Mục tiêu"
    "|Đang thực hiện|Quyết định|Dữ kiện|Đã xong",
    "id": "Profil pengguna|Preferensi|Tingkat dan latar belakang|Kebiasaan|Tentang|Proyek"
    "|Tujuan|Sedang berjalan|Keputusan|Fakta|Selesai",
    "hi": "उपयोगकर्ता प्रोफ़ाइल|पसंद|स्तर और पृष्ठभूमि|आदतें|परिचय|परियोजना|लक्ष्य|जारी कार्य|निर्णय|तथ्य|पूर्ण",
    "th": "โปรไฟล์ผู้ใช้|ความชอบ|ระดับและพื้นฐาน|นิสัย|เกี่ยวกับ|โปรเจกต์|เป้าหมาย|กำลังดำเนินการ"
    "|การตัดสินใจ|ข้อเท็จจริง|เสร็จแล้ว",
}
_LOCAL = {
    lang: dict(zip(_NAMES, names.split("|"), strict=True)) for lang, names in _LOCAL_NAMES.items()
}

# A tag (folded: lower case, no "#") -> (task, section). A few languages' words too, and
# those of every language ``_LOCAL_NAMES`` names the sections in (a vault whose headings
# are Arabic has its entries tagged in Arabic); a word of several is hyphenated, as a tag
# is written (``mục-tiêu``; ``mục_tiêu`` is folded to it).
_TAG_WORDS = {
    ("user_profile", "Preferences"): "preference preferences pref prefers likes dislikes"
    " style tone 偏好 喜好 好み 선호 préférence präferenz предпочтение preferencia"
    " preferência preferenza voorkeur preferencja تفضيل تفضيلات העדפה העדפות ترجیح"
    " ترجیحات tercih tercihler sở-thích preferensi kesukaan पसंद ความชอบ",
    ("user_profile", "Level and background"): "level background skill skills learning"
    " mistake mistakes difficulty 水平 背景 レベル 수준 niveau nivel nível livello"
    " poziom уровень مستوى خلفية רמה רקע سطح پیشینه düzey seviye trình-độ tingkat"
    " latar-belakang स्तर पृष्ठभूमि ระดับ พื้นฐาน",
    ("user_profile", "Habits"): "habit habits routine schedule 习惯 習慣 습관 habitude"
    " gewohnheit привычка hábito abitudine gewoonte nawyk عادة عادات הרגל הרגלים عادت"
    " عادت‌ها alışkanlık alışkanlıklar thói-quen kebiasaan आदत आदतें นิสัย กิจวัตร",
    ("user_profile", "About"): "user profile personal about-me aboutme me 用户 個人 사용자",
    ("project_review", "Goals"): "goal goals objective objectives milestone 目标 目標 목표"
    " objectif ziel цель objetivo obiettivo doel هدف أهداف اهداف מטרה מטרות"
    " hedef hedefler mục-tiêu tujuan sasaran लक्ष्य เป้าหมาย",
    ("project_review", "Active threads"): "todo to-do task tasks wip in-progress blocked"
    " blocker next plan thread 待办 待辦 任务 任務 タスク 할일 مهمة مهام משימה משימות وظیفه"
    " وظایف görev görevler yapılacak yapılacaklar việc-cần-làm nhiệm-vụ tugas कार्य"
    " สิ่งที่ต้องทำ",
    ("project_review", "Decisions"): "decision decisions decided adr 决定 決定 결정 décision"
    " entscheidung решение decisión decisão decisione beslissing decyzja قرار قرارات"
    " החלטה החלטות تصمیم تصمیم‌ها karar kararlar quyết-định keputusan निर्णय फ़ैसला फैसला"
    " การตัดสินใจ ตัดสินใจ",
    ("project_review", "Facts"): "fact facts bug fix issue deadline architecture"
    " component 事实 事実 事實 사실 حقيقة حقائق עובדה עובדות واقعیت واقعیت‌ها olgu olgular"
    " dữ-kiện fakta तथ्य ข้อเท็จจริง",
    ("project_review", "Done"): "done finished completed shipped 完成 完了 완료 منجز مكتمل"
    " הושלם בוצע انجام‌شده tamamlandı bitti đã-xong hoàn-thành selesai पूर्ण"
    " เสร็จแล้ว เสร็จ",
}
# (keys folded as tags are compared: ``تصميم``, typed on an Arabic keyboard, is ``تصمیم``)
TAGS = {tag_key(word): key for key, words in _TAG_WORDS.items() for word in words.split()}
# A section's name of several words, in English and each language above, hyphenated as a
# tag of several words is (``active-threads``, ``đang-thực-hiện``, ``در-جریان``): a
# heading's runs of words are looked up so (``maintenance_extract``). Not ``About``'s
# (``acerca de``, ``à propos`` head any text about anything).
for _task, _sections in SECTIONS.items():
    for _section in _sections[:-1] if _task == "user_profile" else _sections:
        for _name in (_section, *(local[_section] for local in _LOCAL.values())):
            if len(_name.split()) > 1:
                _key = tag_key("-".join(_name.split()))
                TAGS.setdefault(_key, (_task, _section))


def local_words(lang: str) -> Callable[[str], str]:
    """A title or section's name in ``lang``'s vault (English where ``_LOCAL`` has none)."""
    key = "zh-Hant" if writes_traditional_chinese(lang) else language_of(lang)
    local = _LOCAL.get(key, {})
    return lambda name: local.get(name, name)
