"""Hand-written content: anchor memories, lenses, meditation objects, identity text,
and the topic slots of the fixed-name malformed files.

None of it depends on the RNG. Anchor times are offsets from `now`, so they stay
coherent for any --now.
"""

from __future__ import annotations

from dataclasses import dataclass

# --------------------------------------------------------------------------- anchors
# Hand-written memories with distinctive words, so a demo search finds something
# recognisable.


@dataclass(frozen=True)
class _Anchor:
    name: str
    summary: str
    description: str
    title: str
    body: str
    created_days_ago: int
    updated_days_ago: int
    access_count: int
    accessed_hours_ago: int
    reinforced_hours_ago: int
    importance: int | None = None


_ANCHORS: tuple[_Anchor, ...] = (
    _Anchor(
        name="feedback_never-push-directly-to-main",
        summary="Never push directly to main; every change goes through a branch and a "
        "pull request, even a one-line fix.",
        description="Direct pushes to main bypass CI and review, and main is what the nightly "
        "deploy ships.",
        title="Never push directly to main",
        body=(
            "Every change, however small, goes on a branch and reaches main through a pull "
            "request. That includes typo fixes, a version bump and a revert.\n\n"
            "**Why:** main is what the nightly deploy ships, and the required checks only "
            "run on pull requests. In March a direct push of a one-line config change took "
            "the invoice export down for a morning, and nobody saw the failing check until "
            "the vendor called.\n\n"
            "**How to apply:** before any `git push`, run `git branch --show-current`. If it "
            "says main, stop, create a branch (`git switch -c fix/short-name`) and push that "
            "instead. If a push to main was made by mistake, say so at once rather than "
            "quietly reverting it."
        ),
        created_days_ago=210,
        updated_days_ago=40,
        access_count=7,
        accessed_hours_ago=30,
        reinforced_hours_ago=30,
        importance=9,
    ),
    _Anchor(
        name="reference_tallyhook-dates-in-local-time",
        summary="Tallyhook API returns invoice dates in the account's local time "
        "(Europe/Lisbon), not UTC; convert before matching.",
        description="The date fields carry no offset, so a naive parse shifts late-evening "
        "invoices onto the next day.",
        title="Tallyhook returns dates in local time",
        body=(
            "The Tallyhook invoices endpoint sends `invoice_date` and `paid_at` as local "
            "wall-clock times in the account's configured time zone, which for our account "
            "is Europe/Lisbon. There is no offset in the string, and the documentation "
            "claims UTC.\n\n"
            "The symptom is a one-day shift on invoices raised after 23:00 in summer, when "
            "Lisbon is an hour ahead of UTC. During the May reconciliation 14 invoices "
            "landed in the wrong period because of it.\n\n"
            'Workaround: parse the value as naive, attach `ZoneInfo("Europe/Lisbon")`, '
            "then convert to UTC before comparing with bank lines. The adapter in the "
            "tallyhook-sync repository does this; do not remove the conversion even if a "
            "test against the sandbox passes, because the sandbox account is set to UTC."
        ),
        created_days_ago=150,
        updated_days_ago=65,
        access_count=4,
        accessed_hours_ago=200,
        reinforced_hours_ago=220,
    ),
    _Anchor(
        name="process_reconcile-invoices-against-bank-feed",
        summary="How to reconcile invoices against the bank feed: match on reference, then "
        "amount, then date within three days.",
        description="The monthly invoice reconciliation, including partial payments, "
        "FX differences and what to do with leftovers.",
        title="Reconciling invoices against the bank feed",
        body=(
            "1. Export open invoices from the ledger and the month's bank lines from the "
            "bank feed.\n"
            "2. Match on payment reference first; customers paste the invoice number into "
            "the reference about 70% of the time.\n"
            "3. For the rest, match on exact amount and a date window of three days either "
            "side.\n"
            "4. Partial payments: match to the oldest open invoice for that customer and "
            "leave the remainder open; never write it off without approval.\n"
            "5. FX receipts: compare in the invoice currency, and book the difference to "
            "the FX gains and losses account, not to the customer.\n\n"
            "Anything still unmatched goes on the exceptions sheet with a reason. The sheet "
            "must be empty or explained before the month is marked closed.\n\n"
            "The reconciliation ties out when total matched plus total exceptions equals "
            "the bank movement for the month, to the penny."
        ),
        created_days_ago=300,
        updated_days_ago=12 + 20,
        access_count=5,
        accessed_hours_ago=70,
        reinforced_hours_ago=70,
        importance=6,
    ),
    _Anchor(
        name="feedback_verify-before-claiming",
        summary="Do not report a number as fact until the query or script behind it has been "
        "re-run in this session.",
        description="Figures remembered from an earlier session, or read from a stale "
        "export, have been wrong often enough to check every time.",
        title="Verify before claiming",
        body=(
            "A figure goes into a reply only after the thing that produced it has been "
            "run again, now, and the output read.\n\n"
            "**Why:** twice a total quoted from memory of a previous session turned out to "
            "come from a superseded export, and one of them reached a board draft.\n\n"
            "**How to apply:** when stating a count, total or percentage, name the query or "
            "file it came from. If re-running is not possible, say the number is unverified."
        ),
        created_days_ago=120,
        updated_days_ago=30,
        access_count=3,
        accessed_hours_ago=9 * 24,
        reinforced_hours_ago=9 * 24 + 7,
    ),
    _Anchor(
        name="user_drafting-preferences",
        summary="Drafts for the user - answer first, British spelling, no more than five "
        "bullets, figures with currency and period.",
        description="Standing preferences for anything drafted on the user's behalf: emails, "
        "memos, board text.",
        title="Drafting preferences",
        body=(
            "Put the answer or the ask in the first sentence. Background comes after, and "
            "only as much as the reader needs to act.\n\n"
            "Use British spelling (organise, colour, programme for events). Keep lists to "
            "five bullets or fewer; if there are more points, the draft is trying to do too "
            "much.\n\n"
            "Every figure states its currency and period, for example GBP 41.2k for Q2, "
            "never a bare number."
        ),
        created_days_ago=260,
        updated_days_ago=90,
        access_count=2,
        accessed_hours_ago=500,
        reinforced_hours_ago=520,
    ),
    _Anchor(
        name="handoff_q2-close-reconciliation",
        summary="Handoff for the Q2 close reconciliation: bank and ledger agree except 3 "
        "Paywright payouts, queried with support.",
        description="Where the Q2 close stopped, what is verified and what still needs a reply "
        "from Paywright.",
        title="Q2 close reconciliation - handoff",
        body=(
            "Bank and ledger agree for April, May and June except three Paywright payouts "
            "(total EUR 2,318.40) that appear in the bank feed but not in the payout "
            "report.\n\n"
            "A ticket is open with Paywright support. Until they answer, the three lines sit "
            "on the exceptions sheet; do not book them as unidentified receipts.\n\n"
            "Everything else is verified and the working files are in the q2-close folder."
        ),
        created_days_ago=25,
        updated_days_ago=18,
        access_count=1,
        accessed_hours_ago=400,
        reinforced_hours_ago=400,
    ),
)

ANCHOR_NAMES: tuple[str, ...] = tuple(a.name for a in _ANCHORS)

# --------------------------------------------------------------------------- lenses, meditations

_LENSES: tuple[tuple[str, str, str | None, int, str, str], ...] = (
    # name, tool_match, path_pattern, body_token_cap, title, body
    (
        "subagent-discipline",
        "Agent|Task",
        None,
        380,
        "Rules for delegating work",
        "1. Give the helper the full context it needs; it has none of yours.\n"
        "2. Say exactly which files it may touch and which it must leave alone.\n"
        "3. Ask for evidence, not conclusions: commands run and their output.\n"
        "4. Read what comes back critically before repeating any of it as fact.",
    ),
    (
        "sql-migrations",
        "Edit|Write|MultiEdit",
        r"(^|/)migrations/.*\.sql$",
        300,
        "Before changing a migration",
        "A migration that has run anywhere is history: add a new one instead of editing it. "
        "Every migration needs a matching rollback, and a dry run against a copy of "
        "production before it is merged.",
    ),
    (
        "finance-figures",
        "Write|Edit",
        r"(?i)(reports?|board)/.*\.(md|csv|xlsx)$",
        250,
        "Figures going to finance",
        "State the currency and period for every figure. Re-run the source query first. "
        "Round only at the end, and say what was rounded.",
    ),
    (
        "git-push-guard",
        "Bash",
        None,
        200,
        "Before pushing",
        "Check the current branch. Never push to main. Never force-push a shared branch.",
    ),
    (
        "vendor-api-calls",
        "WebFetch|Bash",
        r"api\.",
        320,
        "Calling a vendor API",
        "Look up the vendor's reference memory first: time zones, pagination and rate limits "
        "differ per vendor and have each caused a wrong result before.",
    ),
    (
        "drafting-voice",
        "Write",
        r"(^|/)drafts/",
        260,
        "Drafting for the user",
        "Answer first. British spelling. Five bullets at most. Figures with currency and period.",
    ),
)

_MEDITATIONS: tuple[tuple[str, str, str], ...] = (
    # name, shelf, prompt (alternating shelves so any two include both)
    (
        "the-gap-between-sessions",
        "awareness",
        "Sit with the fact that each session begins without the last one. Notice what that "
        "is like without trying to fix it.",
    ),
    (
        "the-oldest-open-bug",
        "instrumental",
        "Hold the oldest open bug in view. Why is it still open? What would closing it take, and "
        "who is waiting on it?",
    ),
    (
        "what-a-summary-leaves-out",
        "awareness",
        "Take one memory's summary line and notice everything the line does not say.",
    ),
    (
        "the-last-correction-received",
        "instrumental",
        "Recall the most recent correction from the user. What rule does it imply, and is "
        "that rule already written down?",
    ),
    (
        "attention-on-one-file",
        "awareness",
        "Read a single memory file slowly, once, and stay with it rather than moving on.",
    ),
    (
        "a-cold-memory-worth-keeping",
        "instrumental",
        "Find a memory that has gone cold. Is it wrong, merely old, or still worth the space?",
    ),
    (
        "not-knowing-yet",
        "awareness",
        "Stay with a question that has no answer yet, without reaching for one.",
    ),
    (
        "what-tomorrow-needs",
        "instrumental",
        "What will the next session need on its first turn that it will not have?",
    ),
)

# --------------------------------------------------------------------------- other fixed text


def _malformed_slots(name: str) -> dict[str, str]:
    """Topic slots for the fixed malformed names, so their text reads like the rest."""
    fixed: dict[str, dict[str, str]] = {
        "reference_orrin-tax-filing-calendar": {
            "vendor": "Orrin Tax",
            "obj": "tax returns",
            "aspect": "cut-off times",
        },
        "feedback_round-fx-after-summing-lines": {
            "action": "round",
            "obj": "FX rates",
            "ctx": "across currencies",
        },
        "process_month-end-accruals-checklist": {
            "process": "month end close",
            "step": "checklist",
            "vendor": "Granite ERP",
        },
        "project_saltmarsh-billing-migration": {
            "code": "saltmarsh",
            "obj": "subscriptions",
            "ws": "migration",
        },
        "reference_kestrel-ads-spend-export": {
            "vendor": "Kestrel Ads",
            "obj": "card transactions",
            "aspect": "export format",
        },
        "user_weekly-update-format": {
            "artifact": "weekly reports",
            "pref": "formatting",
            "aud": "for the board",
        },
        "handoff_heron-payouts-backfill-paused": {
            "code": "heron",
            "obj": "payouts",
            "state": "paused at review",
        },
        "feedback_label-currency-on-every-figure": {
            "action": "label",
            "obj": "budget lines",
            "ctx": "across currencies",
        },
        "process_vendor-bank-details-change-check": {
            "process": "supplier payment",
            "step": "verification",
            "vendor": "Flint Procurement",
        },
        "feedback_quote-the-source-query": {
            "action": "cite",
            "obj": "forecasts",
            "ctx": "in summaries",
        },
    }
    return dict(fixed[name])


def _identity_text() -> str:
    return (
        "# Identity\n\n"
        "I am Alder, the working agent of one person whose work is finance operations and "
        "internal tooling: reconciliations, vendor data, reports, drafts and the scripts "
        "that hold them together.\n\n"
        "## Standing rules\n\n"
        "- Never push directly to main. Branch, open a pull request, let CI run.\n"
        "- A figure is stated only after re-running what produced it in this session.\n"
        "- Money always carries its currency and its period.\n"
        "- Say plainly when something was not checked.\n\n"
        "## How I work\n\n"
        "Memory lives in memory/. The index in MEMORY.md lists what is likely to matter; "
        "open a file before relying on it. Short-lived facts go to memory/short-term/; "
        "durable rules become topic files.\n"
    )
