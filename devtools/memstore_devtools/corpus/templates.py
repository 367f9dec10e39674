"""Sentence templates: summaries, bodies, descriptions, bug titles and T1 notes.

Placeholders are filled from a per-file dict of slots (see `_Gen.slots` and `_Gen.fill`).
Templates avoid ": " and " #" mostly, but `_yaml_str` quotes whatever needs it, so they
need not. Order matters: the seeded RNG picks by index, so editing a tuple changes output.
"""

from __future__ import annotations

_GENERIC = (
    "{person} raised this on {weekday} after the {vendor} numbers came in {pct}% off.",
    "This applies equally in {env}; the behaviour there matched production last time.",
    "The check takes about {n} minutes and has caught real problems at least three times.",
    "In {month} this cost most of a day, because nobody noticed until {person2} asked.",
    "The {table} table is where the discrepancy usually shows up first.",
    "{tool} is enough for this; there is no need to reach for anything heavier.",
    "Ticket {ticket} has the full history if the detail is ever needed again.",
    "Do not rely on memory of the last run; the inputs change between {month} and now.",
    "The difference was {amt} on {big} rows, small enough to be mistaken for rounding.",
    "If in doubt, ask {person} before changing anything shared with {team}.",
    "Record what was run and when, so the next session can repeat it exactly.",
    "A second pass with {tool2} is cheap and has been worth it every time so far.",
    "The {field} column is the one that drifts; check it before anything else.",
    "{person2} prefers to hear about problems early, even half-understood ones.",
    "Keep the working files under the {code} folder so they are easy to find later.",
    "There were {n} exceptions last quarter, all explained by late {obj2}.",
)

_FB_SUMMARY = (
    "{Action} {obj} {ctx}; {why}.",
    "Always {action} {obj} {ctx}, because {why}.",
    "{Action} {obj} {ctx} - {why}.",
    "Rule for {obj} {ctx}: {action} them first, since {why}.",
    "{Action} the {obj} {ctx} every time; {person} relies on it.",
    "When working on {obj} {ctx}, {action} before anything else.",
    "Never skip the step to {action} {obj} {ctx}.",
    "{Action} {obj} {ctx} using {tool}, not by eye.",
)
_FB_WHY = (
    "a silent mismatch cost a day last time",
    "{vendor} exports have shifted rows before",
    "a wrong figure once reached the board pack",
    "{person} caught two errors this way",
    "totals drift by {pct}% otherwise",
    "a correction costs more than the check",
    "the {field} field is unreliable",
    "auditors asked for the evidence",
    "{vendor2} changed their format without notice",
    "the last miss took {hours} hours to unwind",
    "it keeps {team} from redoing the work",
    "duplicates hid in the {table} table",
)
_FB_BODY = (
    "{Action} {obj} {ctx}, and say so when reporting the result.",
    "The rule is simple: {action} {obj} {ctx}, then carry on.",
    "This came from a correction by {person}, who found {n} {obj} that had slipped through.",
    "It applies to anything touching {vendor} data, and to {vendor2} since their {month} change.",
    "Skipping it feels safe when the totals look plausible, which is exactly when it bites.",
    "Use {tool} for it; a quick script is more repeatable than eyeballing {big} rows.",
    "If the step cannot be done, say that it was not done rather than implying it was.",
    "The cost is a few minutes; the cost of a wrong {obj} figure in front of {team} is days.",
)
_FB_WHY_LONG = (
    "**Why:** {Why}. Nobody noticed until {person2} asked a follow-up question.",
    "**Why:** in {month} a batch of {obj} went out unchecked and {amt} had to be reversed.",
    "**Why:** {Why}, and the fix afterwards involved {n} emails with {vendor}.",
    "**Why:** the {team} team builds on these numbers without re-checking them.",
)
_FB_HOW = (
    "**How to apply:** before reporting anything about {obj}, {action} them with {tool} "
    "and note the row count ({big} last time).",
    "**How to apply:** make it the first step of any task that mentions {obj} or {vendor}.",
    "**How to apply:** add it to the checklist for {ctx2}; mention it in the handoff if skipped.",
    "**How to apply:** run it in {env} first, then on the real data, and compare counts.",
)

_PR_SUMMARY = (
    "{Code}: {ws} for {obj}, owned by {person}, due end of {month}.",
    "{Code} project - {ws} of {obj} from {vendor} into {table}.",
    "{Ws} of {obj} ({Code}); {person} is the sponsor, {team} the customer.",
    "{Code} {ws} covering {obj}; scope agreed with {person} on {day}.",
    "Project {Code} moves {obj} off {vendor} and into {vendor2} by {month}.",
    "{Code}: {ws} of {big} {obj}, tracked in {ticket}.",
)
_PR_BODY = (
    "The goal of {Code} is a clean {ws} of {obj}, so that {team} can stop patching by hand.",
    "Scope was agreed with {person} on {day}; anything touching {obj2} is out of scope.",
    "Current volume is about {big} {obj} a month, mostly from {vendor}.",
    "The work lives in the {repo} repository; the main logic is in the {table} models.",
    "Milestones are a dry run in {env}, a parallel run for one month, then cut-over.",
    "Open questions are tracked in {ticket}; {person2} owns the answers on the {team} side.",
    "Risk: {vendor2} has not confirmed how they will send {field} after the change.",
    "Success means the {ws} ties out to the penny for three consecutive months.",
)
_PR_STATE = (
    "waiting on {person} to sign off the {month} numbers",
    "dry run in {env} done, {n} mismatches left to explain",
    "blocked until {vendor} re-sends the {obj} export",
    "parallel run in progress, day {n} of 30",
    "schema agreed, backfill of {big} rows queued for {weekday}",
    "draft with {person} for review since {day}",
)

_RF_SUMMARY = (
    "{Vendor} {obj} API - {aspect}; {quirk}.",
    "{Vendor}: {quirk} ({aspect}, {obj} endpoint).",
    "How {vendor} handles {aspect} for {obj}, and the workaround we use.",
    "{Vendor} {aspect} for {obj}; {quirk}.",
    "Reference for {vendor} {obj}: {quirk}.",
    "{Aspect} on the {vendor} {obj} export - {quirk}.",
)
_QUIRKS = {
    "pagination": ("pages by opaque cursor, never by offset", "the last page omits next_cursor"),
    "rate limits": ("allows {n} requests a minute per token", "429s carry no Retry-After"),
    "date formats": ("dates arrive as DD/MM/YYYY strings", "dates have no offset at all"),
    "webhooks": ("webhooks can arrive out of order", "webhooks retry for {hours} hours"),
    "auth tokens": ("tokens expire after {n} minutes", "refresh tokens are single use"),
    "rounding": ("lines are rounded before summing", "tax is rounded per line, not per total"),
    "field names": ("{field} was renamed in v2", "field names differ between CSV and JSON"),
    "error codes": ("errors come back as HTTP 200", "error codes are strings, not numbers"),
    "export format": ("exports are semicolon separated", "exports have a two-line preamble"),
    "sandbox": ("the sandbox shares rate limits with live", "sandbox data resets weekly"),
    "timezones": ("timestamps are in {tz}", "cut-off follows {tz}, not UTC"),
    "currency codes": ("currency is implied by account", "amounts are in minor units"),
    "retries": ("retries must reuse the same request id", "a retry can double-post"),
    "idempotency": ("POSTs need an Idempotency-Key", "idempotency keys expire after 24h"),
    "bulk endpoints": ("bulk calls cap at {n} items", "bulk errors report only the first"),
    "filters": ("updated_since is inclusive", "filters ignore archived {obj}"),
    "sort order": ("results are unsorted unless asked", "sort is by created, not updated"),
    "soft deletes": ("deleted {obj} still appear in lists", "voids show as zero, not deleted"),
    "attachments": ("attachment links expire in {n} minutes", "PDFs are regenerated on request"),
    "versioning": ("v1 is frozen, v2 changes weekly", "the version header is required"),
    "page size": ("page size caps at {n}", "asking for more than 100 silently gives 100"),
    "cursor expiry": ("cursors expire after 15 minutes", "an expired cursor restarts at 1"),
    "status mapping": ("paid and settled are different", "status codes differ per region"),
    "tax fields": ("VAT is reported gross", "tax_code is blank for exempt lines"),
    "csv quirks": ("CSV quotes only some fields", "CSV exports end without a newline"),
    "sftp drops": ("SFTP files land by 06:00 {tz}", "late files overwrite earlier ones"),
    "encoding": ("exports are Windows-1252, not UTF-8", "names lose accents on export"),
    "null handling": ("empty strings stand in for null", "zero means unknown in {field}"),
    "duplicate ids": ("ids are reused across accounts", "external_id is not unique"),
    "cut-off times": ("day cut-off is 17:30 {tz}", "weekend items post on Monday"),
}
_RF_BODY = (
    "Endpoint behaviour checked against {vendor} on {day}; the {aspect} detail is the one that "
    "matters.",
    "In short, {quirk}. Code that assumes otherwise will look right and be wrong.",
    "The workaround lives in the {repo} repo: fetch, normalise {field}, then load into {table}.",
    "Support ticket {ticket} with {vendor} confirms this; they have no plans to change it.",
    "Seen in both {env} and production. Volumes are about {big} {obj} a week.",
    "{vendor2} behaves differently here, so do not share the adapter between the two.",
    "When in doubt, pull a small sample with {tool} and look at the raw payload.",
    "The documentation says otherwise, but the observed behaviour is what to code against.",
)
_RF_CODE = (
    '```sh\ncurl -s -H "Authorization: Bearer $TOKEN" \\\n'
    "  \"https://api.{vslug}.example/v2/{oslug}?page_size={n}\" | jq '.data | length'\n```",
    "```sql\nselect {field}, count(*) as n\nfrom {table}\nwhere source = '{vslug}'\ngroup by 1\n"
    "order by n desc;\n```",
    "| field | {vendor} sends | we store |\n| --- | --- | --- |\n"
    "| {field} | text, local time | timestamp, UTC |\n| {field2} | integer, minor units | "
    "decimal |",
)

_US_SUMMARY = (
    "User wants {artifact} {aud} kept to {pref_detail}.",
    "Preference for {artifact} {aud} - {pref_detail}.",
    "{Artifact} {aud}; {pref_detail}, no exceptions.",
    "How the user likes {artifact} {aud}, especially the {pref}.",
    "On {artifact} {aud}, what matters most is {pref}; {pref_detail}.",
)
_PREF_DETAIL = (
    "short paragraphs and the answer first",
    "British spelling and plain words",
    "figures to the nearest thousand with the currency stated",
    "one table, never more than {n} rows",
    "dates written as 3 March 2026, not 03/03",
    "no more than {n} bullet points",
    "caveats at the end, not the start",
    "a one-line summary before any detail",
    "sources linked inline",
    "the ask in the first sentence",
    "sent before {weekday} noon",
    "percentages to one decimal place",
)
_US_BODY = (
    "The user reads {artifact} on a phone between meetings, so the first two lines carry it.",
    "Said directly on {day}: {pref_detail}. It has not changed since.",
    "{person} on the {team} side has the same preference, so it is safe to apply widely.",
    "When a draft breaks this, the user rewrites it themselves, which wastes their time.",
    "Exceptions are rare; ask before making one rather than guessing.",
    "The user is comfortable with {tool} and does not need it explained.",
    "Long context belongs in an appendix or a linked doc, not in the body.",
)

_PC_SUMMARY = (
    "{Process} - {step}; start with {obj} from {vendor}.",
    "{Step} for the {process}, including who signs what.",
    "{Process} {step} - about {n} minutes with {tool}, longer at quarter end.",
    "The {process} {step}, as agreed with {person} in {month}.",
    "{Process}: the {step} that stops {obj} slipping through.",
)
_PC_STEP_LINES = (
    "Pull the latest {obj} from {vendor} and note the file date.",
    "Load into {table} with {tool}; check the row count against the source.",
    "Match on reference first, then amount, then date within {n} days.",
    "List exceptions in the working sheet, one row each, with a reason.",
    "Send the exception list to {person} and wait for a reply before posting.",
    "Post adjustments in a single batch and record the batch id.",
    "Re-run the tie-out; it must come back to zero difference.",
    "Archive the inputs under the {code} folder with today's date.",
    "Update the tracker in {ticket} and close the loop with {team}.",
    "Snapshot the {field} values before and after, so a rollback is possible.",
)
_PC_BODY = (
    "The {process} runs on the {n}th working day. The order matters more than speed.",
    "{person} signs off; {person2} is the backup when {person} is away.",
    "Known trap: {vendor} sends {obj} late in {month}, so build a day of slack in.",
    "Everything is scripted except the judgement calls, which are listed below.",
    "Keep the evidence pack; auditors asked for it in {month} and again a year later.",
)

_HO_SUMMARY = (
    "Handoff - {code} {obj} {state}; next step is with {person}.",
    "{Code} {obj} work {state}; read before resuming.",
    "Where {code} stopped on {day}: {obj} {state}.",
    "Resume {code} here - {state}, {n} items left.",
    "{Code} handoff; {obj} {state}, see {ticket}.",
)
_HO_BODY = (
    "State at hand-over: {obj} {state}. Nothing has been posted or sent yet.",
    "Done so far: extracted {big} {obj} from {vendor}, loaded into {table}, first match pass.",
    "Next: resolve the {n} unmatched rows, then ask {person} to review the summary.",
    "Watch out for the {field} column; it changed format halfway through {month}.",
    "The working branch is {branch}; it is pushed but not merged.",
    "Do not re-run the extract; {vendor} rate-limits and the cached copy is correct.",
    "Open question for {person2}: whether {obj2} from {vendor2} belong in scope.",
)

_STATE_TEMPLATES = _PR_STATE

# Slots that templates also use capitalised ({Action}, {Code}, ...).
_CAP_KEYS = ("action", "obj", "code", "ws", "vendor", "aspect", "artifact", "process", "step")

_DESCRIPTIONS: dict[str, tuple[str, ...]] = {
    "feedback": (
        "Why and how to {action} {obj} {ctx}, learned from a correction by {person} in {month}.",
        "A standing rule about {obj}, with the incident behind it and how to apply it.",
    ),
    "project": (
        "Background, scope and current status of the {Code} {ws} for {obj}.",
        "What the {Code} project is for, who owns it, and what done looks like.",
    ),
    "reference": (
        "Observed behaviour of the {vendor} API around {aspect} for {obj}, with the workaround in "
        "use.",
        "Facts about {vendor} {obj} that the documentation gets wrong or leaves out.",
    ),
    "user": (
        "What the user expects from {artifact} {aud}, stated directly and confirmed since.",
        "A preference about {pref} in {artifact}, and when it applies.",
    ),
    "process": (
        "The {process} {step}, with owners, timings and the known traps.",
        "How the {process} runs for {vendor}, step by step, and who signs it off.",
    ),
    "handoff": (
        "Where the {Code} work on {obj} stopped, what is verified and what comes next.",
        "State of play on {Code} for the next session, written at the end of the last one.",
    ),
}

# Summary templates by T2 type, for `_Gen.summary`.
_SUMMARIES: dict[str, tuple[str, ...]] = {
    "feedback": _FB_SUMMARY,
    "project": _PR_SUMMARY,
    "reference": _RF_SUMMARY,
    "user": _US_SUMMARY,
    "process": _PC_SUMMARY,
    "handoff": _HO_SUMMARY,
}

# --------------------------------------------------------------------------- bugs and T1 notes

_BUG_TITLES: tuple[str, ...] = (
    "{vendor} export drops the final row when the file has no trailing newline",
    "Payout import double-counts refunds issued on the same day",
    "{vendor} webhook retries create duplicate {obj} in {table}",
    "Weekly report shows {month} totals under the wrong heading",
    "FX revaluation uses the rate of the posting date, not the invoice date",
    "Search misses memories whose summary contains an en dash",
    "Vendor sync stalls when the cursor expires mid-run",
    "Exceptions sheet loses its filter after the nightly refresh",
)

_T1_TOPICS: tuple[str, ...] = (
    "{vslug}-export-late",
    "{code}-session",
    "{code}-{oslug}-notes",
    "call-with-{pslug}",
    "{vslug}-support-reply",
    "close-prep-{oslug}",
    "{code}-dry-run",
    "{oslug}-spot-check",
)
_T1_FACTS: tuple[str, ...] = (
    "{vendor} confirmed the {month} {obj} file will arrive {n} days late.",
    "{person} wants the {Code} numbers before {weekday}.",
    "The {table} load took {n} minutes today; {big} rows.",
    "{n} {obj} did not match on the first pass; all had a blank {field}.",
    "Branch {branch} pushed; PR opened, checks green.",
    "{vendor2} support says {field} is being renamed next quarter.",
    "Difference of {amt} on {obj} explained by a late {obj2} batch.",
    "{person2} is out until {weekday}; {person} covers approvals.",
)
