"""Word lists the topic names and template slots are drawn from.

Topic names are built combinatorially from these (type, then three slots), so even
100,000 files get distinct names and varied vocabulary. Order matters: the seeded RNG
indexes into these tuples, so reordering or editing a list changes every corpus.
"""

from __future__ import annotations

import re


def _words(text: str) -> tuple[str, ...]:
    """Comma-separated words across lines: compact, and left alone by formatters."""
    return tuple(w.strip() for w in text.replace("\n", " ").split(",") if w.strip())


_VENDORS = _words(
    """
Tallyhook, Ledgerline, Paywright, Quillbank, Norrow Freight, Brightmeter, Cobalt Payroll,
Harbor CRM, Finchpost, Orrin Tax, Saltmarsh Billing, Kestrel Ads, Vantor Logistics,
Meridian Supply, Pellucid Analytics, Arbor HR, Copperline Telecom, Juniper Cover,
Halcyon Cloud, Stonegate Bank, Wrenfield Payments, Lumen Invoicing, Tidewater Freight,
Granite ERP, Foxglove Mail, Basalt Storage, Ironbark Leasing, Marigold Catering, Quarry Labs,
Sable Security, Bramble Travel, Calder Energy, Driftwood Print, Elmstead Legal, Fennel Foods,
Gannet Couriers, Hollis Recruiting, Inkwell Docs, Jasper Cards, Kiln Software,
Larkspur Events, Mossgate Property, Nimbus Metrics, Oakhurst Audit, Pebble Expenses,
Quince Subscriptions, Rookery Data, Sorrel Marketing, Thistle Telecom, Umber Utilities,
Verdant Solar, Willow Benefits, Yarrow Health, Zephyr Shipping, Alder Fleet, Birchway Rail,
Cinder Hosting, Dunlin FX, Egret Survey, Flint Procurement
"""
)

_TOOLS = _words(
    """
git, GitHub Actions, pytest, ruff, jq, pandas, DuckDB, SQLite, Postgres, BigQuery, dbt, make,
Docker, cron, rsync, curl, ripgrep, Excel, Google Sheets, pre-commit, mypy, uv, Terraform,
Airflow, Metabase, Jupyter, csvkit, awk, sed, tmux, Pandoc, LibreOffice, psql, sqlite-utils,
httpie, openpyxl, polars, gh
"""
)

_PEOPLE = _words(
    """
Priya, Marcus, Elena, Tomasz, Aisha, Jonah, Mei, Rafael, Ingrid, Kwame, Sofia, Declan, Yuki,
Olusegun, Hannah, Mateo, Freya, Arjun, Noor, Callum, Beatriz, Viktor, Leila, Dmitri, Amara,
Theo, Sunita, Gareth, Rosa, Emeka, Zoë, José, Siobhan, Kenji, Astrid, Farah
"""
)

_OBJECTS = _words(
    """
invoices, credit notes, purchase orders, payouts, refunds, chargebacks, timesheets,
expense claims, bank statements, ledger entries, journal lines, shipments, SKUs, contracts,
renewals, subscriptions, usage records, tax returns, payroll runs, vendor records,
customer accounts, leads, support tickets, survey responses, accruals, prepayments,
fixed assets, depreciation schedules, budget lines, forecasts, FX rates, cost centres,
deliveries, returns, stock counts, price lists, discount codes, commission statements,
grant reports, board minutes, audit samples, remittance advices, direct debits,
standing orders, card transactions, petty cash logs, mileage claims, supplier quotes,
service credits, late fees
"""
)

_FIELDS = _words(
    """
invoice_date, posted_at, settlement_id, currency, amount_minor, tax_code, cost_centre,
customer_ref, po_number, due_date, fx_rate, memo, line_total, vat_amount, batch_id,
external_id, updated_since, page_token, created_at, period_end, gl_code, net_amount,
gross_amount, status_code, remittance_ref
"""
)

_CODENAMES = _words(
    """
heron, atlas, lantern, meadow, beacon, falcon, harbour, compass, orchid, summit, tundra,
cascade, ember, glacier, horizon, indigo, jetty, keystone, lagoon, mosaic, nebula, obsidian,
prairie, quartz, riverbend, sequoia, tessera, upland, vesper, wildfire, xylem, yonder,
zenith, anvil, bastion, citadel, delta, estuary, fjord, gossamer, hinterland, isthmus,
kingfisher, lodestar, monsoon, northstar, outpost, pinnacle, quill, rampart, saffron,
tributary, umbra, vantage, waypoint, bluebell, canopy, equinox, foothill, ironwood
"""
)

_WORKSTREAMS = _words(
    """
backfill, migration, cleanup, dashboard, reconciliation, audit, forecast model, dedupe,
export, import pipeline, vendor review, cost analysis, renewal tracker, data dictionary,
alerting, schema change, api integration, report automation, close checklist, handover pack,
variance analysis, accrual model, tax review, payment run, board pack, pricing review,
churn analysis, capacity plan, retention policy, access review
"""
)

_ASPECTS = _words(
    """
pagination, rate limits, date formats, webhooks, auth tokens, rounding, field names,
error codes, export format, sandbox, timezones, currency codes, retries, idempotency,
bulk endpoints, filters, sort order, soft deletes, attachments, versioning, page size,
cursor expiry, status mapping, tax fields, csv quirks, sftp drops, encoding, null handling,
duplicate ids, cut-off times
"""
)

_ACTIONS = _words(
    """
re-run, diff, dedupe, sort, round, label, timestamp, snapshot, validate, cite, sample,
archive, stage, split, tag, date-stamp, sign off, review, trim, normalise, reconcile, count,
spot-check, back up, version, lock, freeze, batch, cache, export, tie out, match, flag,
annotate, summarise, escalate, document, pin, checksum, hand-check
"""
)

_FB_CONTEXTS = _words(
    """
before sending, before merging, after imports, at month end, in summaries, for finance,
in pull requests, on fridays, before deploys, for the board pack, in spreadsheets,
after vendor exports, in sql, before quoting figures, during close, for auditors, in drafts,
when numbers disagree, after schema changes, in handoffs, for external emails,
before deleting anything, in notebooks, across currencies, across timezones, per cost centre,
per vendor, in cron jobs, on shared drives, in commit messages, before bulk updates,
after refunds, with new vendors, in weekly updates, for tax filings, on first import,
during incidents, before archiving, in csv exports, for quarter end
"""
)

_ARTIFACTS = _words(
    """
status updates, board packs, vendor emails, code reviews, meeting notes, weekly reports,
slide decks, spreadsheets, commit messages, pull request text, incident writeups,
budget memos, audit responses, contract summaries, invoice queries, dashboards,
data dictionaries, handover notes, release notes, cover letters, policy drafts, chart titles,
sql comments, error messages, calendar invites, expense narratives, forecast commentary,
tax workpapers, survey writeups, customer replies, one-pagers, agenda items, variance notes,
project briefs, review comments, readme files, runbooks, decision logs, quarterly letters,
grant narratives
"""
)

_PREF_ASPECTS = _words(
    """
length, tone, spelling, formatting, timing, charts, tables, citations, headings,
bullet style, number format, date format, currency format, sign-off, level of detail, jargon,
order of sections, file naming, attachments, rounding, caveats, summary first, links, fonts,
colour use, abbreviations, time zone, first person, emoji, subject lines
"""
)

_AUDIENCES = _words(
    """
for investors, for the board, for vendors, for auditors, for the ops team, for engineers,
for legal, for new starters, for the finance lead, for customers, for the ceo,
for regulators, for contractors, for the tax adviser, for the bank, for partners,
for the data team, for sales, for hr, for the landlord, for insurers, for the accountant,
for procurement, for support, for the trustees, for the steering group, on mondays,
on fridays, at quarter end, during close
"""
)

_PROCESSES = _words(
    """
month end close, release, code review, weekly report, vendor onboarding, data refresh,
invoice run, payroll check, backlog triage, incident review, quarterly forecast,
expense audit, bank reconciliation, contract renewal, budget rollover, tax filing,
board pack build, access review, dependency update, schema migration, dashboard refresh,
customer refund, credit control, supplier payment, year end, vat return, pricing update,
churn report, grant claim, fixed asset register, stock take, commission calc, survey export,
hiring pipeline, offboarding, petty cash, insurance renewal, audit prep,
data retention sweep, fx revaluation
"""
)

_STEPS = _words(
    """
checklist, order of operations, sign off, rollback, dry run, handover, cut-off,
evidence pack, owner list, timings, prerequisites, exceptions, approvals, tie-out,
naming rules, folder layout, escalation, reminders, verification, freeze window, audit trail,
templates, input files, output checks, known traps, retry rules, calendar, dependencies,
kpis, retro notes, first steps, final checks, tools, access needed, thresholds
"""
)

_HANDOFF_STATES = _words(
    """
paused at review, half migrated, awaiting sign off, blocked on access, needs rerun,
ready to merge, waiting on vendor, draft done, numbers unverified, parked, mid backfill,
tests failing, pending decision, ready for qa, stalled on data, first pass done,
needs second pair of eyes, handed to finance, scope changed, waiting on priya,
on hold until close, ready to send, partially reconciled, schema agreed, export pending
"""
)

_TEAMS = _words(
    """
finance, ops, legal, data, engineering, sales, support, procurement, people, tax, treasury,
marketing
"""
)
_TABLES = _words(
    """
stg_invoices, fct_payments, dim_vendor, raw_bank_lines, gl_journal, fct_usage, dim_customer,
stg_payouts, recon_matches, fx_daily, ap_aging, ar_open_items, budget_2026, payroll_lines,
expense_items
"""
)
_TZS = _words(
    """
Europe/Lisbon, America/Chicago, Asia/Singapore, Europe/Berlin, America/Denver,
Australia/Sydney, Europe/London, America/New_York, Asia/Kolkata, Pacific/Auckland
"""
)
_CURRENCIES: tuple[tuple[str, str], ...] = (("GBP", "£"), ("USD", "$"), ("EUR", "€"))
_WEEKDAYS = _words(
    """
Monday, Tuesday, Wednesday, Thursday, Friday
"""
)
_MONTHS = _words(
    """
January, February, March, April, May, June, July, August, September, October, November,
December
"""
)
_ENVS: tuple[str, ...] = ("staging", "the sandbox", "the test tenant", "the UAT copy")
_TICKET_PREFIXES = _words(
    """
FIN, OPS, DATA, ENG, AP, AR, TAX
"""
)


def _slug(text: str) -> str:
    """Kebab-case ASCII slug: the form topic names take on disk."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
