"""Words an AutoWebWorld file leaves out: ids, labels, item names, typed text and intents.

The format names things by CSS selector and upper-case id only. Labels come from those
names; items and typed text come from Faker, seeded by the world id, so an import is
deterministic.
"""

from __future__ import annotations

import hashlib
import random
import re

from faker import Faker

from webworld.propose.builder import slug
from webworld.spec.archetypes import match_archetype

# selector / id words that say how a control is reached, not what it is
NOISE = frozenset({"nav", "btn", "button", "link", "input", "direct", "hover", "menu", "item",
                   "div", "container", "option", "field", "go", "to", "act", "click",
                   "dropdown", "select", "toggle", "tile", "row", "card", "list"})


def words(text: str) -> list[str]:
    """``"#nav-more-flights .x"`` / ``"HOME_GO_TO_FLIGHTS"`` -> lower-case words."""
    return [w for w in re.split(r"[^a-z0-9]+", text.lower()) if w]


def humanize(text: str) -> str:
    out = " ".join(words(text))
    return out[:1].upper() + out[1:] if out else text


def element_id(selector: str) -> str:
    """A stable webworld element id for a CSS selector: ``"#nav-flights"`` -> ``nav_flights``."""
    return slug(" ".join(words(selector)), 60)


def label_of(selector: str, fallback: str = "") -> str:
    """A visible label from a selector's last token: ``#nav-flights-direct`` -> ``Flights``."""
    last = selector.replace(">", " ").split()[-1] if selector.split() else selector
    kept = [w for w in words(last) if w not in NOISE and not w.isdigit()]
    if not kept:
        kept = [w for w in words(fallback) if w not in NOISE] or words(last) or ["Open"]
    text = " ".join(kept)
    return text[:1].upper() + text[1:]


def option_label(option_selector: str, container_selector: str) -> str:
    """A menu / dropdown option's text: its selector less what it shares with the container
    (``#nav-more-flights`` in ``#nav-more-toggle`` -> ``Flights``)."""
    opt, box = words(option_selector), words(container_selector)
    i = 0
    while i < min(len(opt), len(box)) - 1 and opt[i] == box[i]:
        i += 1
    kept = [w for w in opt[i:] if w not in NOISE] or opt[i:] or opt
    return humanize(" ".join(kept))


def world_names(app: str, fallback: str) -> tuple[str, str, str]:
    """``"Project Management-Asana_app"`` -> (id ``aww_asana``, name ``Asana``, theme
    ``project management``)."""
    theme_part, _, name_part = app.rpartition("-")
    name_words = [w for w in words(name_part or fallback) if w != "app"] or words(fallback)
    name = " ".join(w.capitalize() for w in name_words) or "Imported site"
    theme = " ".join(words(theme_part)) or name.lower()
    return slug(f"aww {' '.join(name_words)}", 60), name, theme


def _rng(*parts: str) -> random.Random:
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _faker(*parts: str) -> Faker:
    fake = Faker("en_US")
    fake.seed_instance(_rng(*parts).randrange(2**31))
    return fake


def item_names(world: str, theme: str, noun: str, n: int = 3) -> list[str]:
    """``n`` distinct names for the items a list of ``noun`` shows."""
    arch = match_archetype(f"{theme} {noun}").archetype
    if noun in (arch.entity, arch.entity_plural) or arch.entity in noun:
        return list(arch.items[:n])
    fake = _faker(world, noun)
    names: list[str] = []
    while len(names) < n:
        if noun in _PEOPLE:
            name = fake.name()
        elif noun in _NUMBERED:
            name = f"{noun.capitalize()} #{fake.random_int(1000, 9999)}"
        else:
            name = " ".join(fake.catch_phrase().split()[:3]).capitalize()
        if name not in names:
            names.append(name)
    return names


_PEOPLE = frozenset({"user", "member", "contact", "friend", "recipient", "author", "person",
                     "participant", "attendee", "follower", "customer", "agent", "assignee",
                     "artist", "instructor", "doctor", "host", "guest", "candidate"})
_NUMBERED = frozenset({"order", "invoice", "ticket", "issue", "transaction", "payment",
                       "booking", "reservation", "pr", "pull", "request", "case", "claim"})


_TEXT_KINDS = (
    (("email",), lambda f: f"{f.first_name().lower()}.{f.last_name().lower()}@example.com"),
    (("password",), lambda f: f"{f.word().capitalize()}!{f.random_int(10, 99)}x"),
    (("phone",), lambda f: f.numerify("(555) ###-####")),
    (("zip", "postal"), lambda f: f.numerify("#####")),
    (("city", "origin", "destination", "location", "from", "to"), lambda f: f.city()),
    (("address", "street"), lambda f: f.street_address()),
    (("name", "title", "subject", "project", "task", "section"),
     lambda f: f.catch_phrase()),
    (("card", "number"), lambda f: "4111111111111111"),
    (("cvv", "cvc"), lambda f: "123"),
    (("expiry",), lambda f: "12/28"),
    (("quantity", "qty", "amount", "count"), lambda f: "2"),
    (("comment", "message", "description", "body", "note", "text", "bio", "reply"),
     lambda f: f.sentence(nb_words=8)),
)


def typed_text(world: str, field_words: str) -> str:
    """Realistic text for a field named like ``field_words`` (email, city, comment ...)."""
    fake = _faker(world, field_words)
    found = set(words(field_words))
    for keys, make in _TEXT_KINDS:
        if found & set(keys):
            return make(fake)
    return fake.word().capitalize()


_VERBS = {
    "create": "create", "created": "create", "creation": "create", "add": "add",
    "added": "add", "complete": "complete", "completed": "complete", "send": "send",
    "sent": "send", "save": "save", "saved": "save", "submit": "submit",
    "submitted": "submit", "post": "post", "posted": "post", "publish": "publish",
    "published": "publish", "book": "book", "booked": "book", "booking": "book",
    "place": "place", "placed": "place", "order": "order", "ordered": "order",
    "schedule": "schedule", "scheduled": "schedule", "upload": "upload",
    "uploaded": "upload", "update": "update", "updated": "update", "delete": "delete",
    "deleted": "delete", "join": "join", "joined": "join", "enroll": "enroll",
    "enrolled": "enroll", "transfer": "make", "pay": "make", "payment": "make",
    "share": "share", "shared": "share", "apply": "submit", "checkout": "check out",
    "purchase": "complete", "confirm": "confirm", "confirmed": "confirm",
    "reset": "reset", "follow": "follow", "followed": "follow", "like": "like",
    "liked": "like", "start": "start", "started": "start", "cancel": "cancel",
    "cancelled": "cancel", "invite": "send", "invited": "send",
}
_PREPOSITIONS = frozenset({"from", "via", "with", "by", "for", "in", "to", "on"})
_QUIET = frozenset({"success", "page", "done", "complete", "completed", "confirmation",
                    "confirmed", "result", "view", "screen"})


def intents(terminal: str, site: str) -> list[str]:
    """Task phrasings for reaching the success page ``terminal``
    (``TASK_CREATE_SUCCESS`` -> "Create a task on Asana.")."""
    ws = words(terminal)
    verb = next((_VERBS[w] for w in ws if w in _VERBS), None)
    thing_words = [w for w in ws if w not in _VERBS and w not in _QUIET] or \
        [w for w in ws if w not in _QUIET]
    thing = " ".join(thing_words)
    if verb is None:
        page = humanize(terminal)
        return [f"Get to the “{page}” page on {site}.",
                f"On {site}, reach the “{page}” page.",
                f"Please finish the steps that lead to “{page}” on {site}."]
    obj = f"{_article(thing)} {thing}".strip() if thing else "it"
    return [f"{verb.capitalize()} {obj} on {site}.",
            f"Your task is to {verb} {obj} on {site}.",
            f"Please {verb} {obj} on {site}."]


def _article(noun: str) -> str:
    if not noun or noun.split()[0] in _PREPOSITIONS:
        return ""
    return "an" if noun[0] in "aeiou" else "a"
