"""The demo dataset: a coding agent's memory of a small invoicing product, written by hand.

It exercises every part of a retrieval evaluation: all five importance tiers, spec folders,
sessions, queries of all eight seed categories with intents, graded judgments 0-3, equivalence
classes (a parent memory and its chunks), causal chains (decision lineages), and session
context. Lexical and dense search genuinely disagree on it: some queries share words with their
answers (trigger-match), others are paraphrases (semantic-search).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memgauge.data.models import (
    CausalChain,
    EquivalenceClass,
    EvalQuery,
    Judgment,
    Memory,
    RetrievalDataset,
    SessionContext,
)

__all__ = ["demo_dataset"]

_T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

# id, tier, folder, session, day offset, text
_MEMORIES: list[tuple[str, str, str, str, int, str]] = [
    # constitutional rules: always relevant to the work they govern
    (
        "m-const-secrets",
        "constitutional",
        "team",
        "s01",
        0,
        "Rule: never commit API keys, passwords or tokens to the repository; secrets live in the "
        "vault and reach services through environment variables.",
    ),
    (
        "m-const-migrations",
        "constitutional",
        "infra",
        "s01",
        0,
        "Rule: every database schema migration must be reversible and must ship with a tested "
        "down-migration.",
    ),
    (
        "m-const-tests",
        "constitutional",
        "team",
        "s01",
        0,
        "Rule: run the full test suite and the type checker before merging any pull request.",
    ),
    # billing
    (
        "m-bill-db-decision",
        "critical",
        "billing",
        "s02",
        1,
        "Decision: billing data moves to PostgreSQL 16 instead of MySQL because we need row-level "
        "security per tenant and transactional DDL for safe migrations.",
    ),
    (
        "m-bill-rls-problem",
        "important",
        "billing",
        "s02",
        1,
        "Problem found: in MySQL one tenant's invoices leaked into another tenant's export because "
        "tenant filtering lived only in application code.",
    ),
    (
        "m-bill-rls-impl",
        "important",
        "billing",
        "s03",
        4,
        "Implemented row-level security policies on the invoices and payments tables, keyed on the "
        "app.tenant_id session setting.",
    ),
    (
        "m-bill-currency",
        "critical",
        "billing",
        "s03",
        4,
        "Money is stored as integer minor units (cents) with an ISO 4217 currency code; never use "
        "floating point for amounts.",
    ),
    (
        "m-bill-rounding",
        "normal",
        "billing",
        "s05",
        9,
        "Tax is rounded half-even per invoice line, not on the invoice total, to match the German "
        "accountant's expectations.",
    ),
    (
        "m-bill-stripe",
        "important",
        "billing",
        "s05",
        9,
        "Payments go through Stripe; webhooks are verified with the signing secret and processed "
        "idempotently using the event id.",
    ),
    (
        "m-bill-webhook-bug",
        "normal",
        "billing",
        "s07",
        15,
        "Bug fixed: duplicate Stripe webhook deliveries created two payment rows; a unique index on "
        "stripe_event_id now prevents it.",
    ),
    (
        "m-bill-dunning",
        "normal",
        "billing",
        "s08",
        18,
        "Dunning schedule: reminder emails 3, 7 and 14 days after the due date, then the account is "
        "paused.",
    ),
    # auth
    (
        "m-auth-session-decision",
        "critical",
        "auth",
        "s02",
        2,
        "Decision: replace JWTs in localStorage with HTTP-only secure session cookies after the XSS "
        "review; sessions are stored server-side in Redis.",
    ),
    (
        "m-auth-xss-review",
        "important",
        "auth",
        "s02",
        2,
        "Security review found that any XSS would let an attacker read the JWT from localStorage "
        "and impersonate the user.",
    ),
    (
        "m-auth-csrf",
        "important",
        "auth",
        "s04",
        6,
        "With cookie sessions we added CSRF protection: a double-submit token on every state-changing "
        "request.",
    ),
    (
        "m-auth-password-hash",
        "critical",
        "auth",
        "s04",
        6,
        "Passwords are hashed with Argon2id (memory 64 MiB, 3 iterations); bcrypt hashes are "
        "upgraded on next login.",
    ),
    (
        "m-auth-2fa",
        "normal",
        "auth",
        "s09",
        21,
        "Two-factor authentication uses TOTP; recovery codes are shown once and stored hashed.",
    ),
    (
        "m-auth-sso-idea",
        "temporary",
        "auth",
        "s10",
        24,
        "Maybe later: SAML single sign-on for the enterprise plan; not scheduled.",
    ),
    # search
    (
        "m-search-engine",
        "important",
        "search",
        "s05",
        10,
        "Invoice search uses PostgreSQL full-text search with a GIN index on a tsvector column; "
        "Elasticsearch was rejected as too much operational load for a team of four.",
    ),
    (
        "m-search-fuzzy",
        "normal",
        "search",
        "s06",
        12,
        "Customer name search tolerates typos with the pg_trgm extension and a similarity threshold "
        "of 0.3.",
    ),
    (
        "m-search-slow",
        "normal",
        "search",
        "s07",
        14,
        "The invoice search page was slow (2 s) because of an OFFSET-based pagination; switched to "
        "keyset pagination on (created_at, id).",
    ),
    # infra
    (
        "m-infra-deploy",
        "important",
        "infra",
        "s03",
        5,
        "Deploys run from GitHub Actions to Fly.io with blue-green releases; a failed health check "
        "rolls back automatically.",
    ),
    (
        "m-infra-backups",
        "critical",
        "infra",
        "s04",
        7,
        "Database backups: continuous WAL archiving plus a nightly base backup, restored and "
        "verified every Monday.",
    ),
    (
        "m-infra-migration-tool",
        "important",
        "infra",
        "s04",
        7,
        "Schema migrations are written with Alembic; each revision has upgrade() and downgrade() "
        "and CI runs both directions.",
    ),
    (
        "m-infra-outage",
        "normal",
        "infra",
        "s08",
        19,
        "Incident: a long-running migration locked the payments table for 4 minutes; migrations "
        "that rewrite big tables now run with lock_timeout and in batches.",
    ),
    (
        "m-infra-monitoring",
        "normal",
        "infra",
        "s06",
        11,
        "Monitoring: Prometheus scrapes the app, Grafana dashboards per service, PagerDuty alerts on "
        "error rate above 2% for 5 minutes.",
    ),
    (
        "m-infra-redis",
        "normal",
        "infra",
        "s03",
        5,
        "Redis 7 runs as a managed instance; it holds sessions and the rate-limiter counters, "
        "nothing that cannot be rebuilt.",
    ),
    # ui
    (
        "m-ui-framework",
        "important",
        "ui",
        "s02",
        3,
        "Frontend: React with TypeScript and Vite; server state through TanStack Query; no Redux.",
    ),
    (
        "m-ui-a11y",
        "normal",
        "ui",
        "s06",
        12,
        "Accessibility: every form field has a visible label, focus states are never removed, and "
        "colour contrast meets WCAG AA.",
    ),
    (
        "m-ui-dark-mode",
        "temporary",
        "ui",
        "s10",
        25,
        "User asked for dark mode; parked until after the billing release.",
    ),
    (
        "m-ui-invoice-pdf",
        "normal",
        "ui",
        "s09",
        22,
        "Invoice PDFs are rendered server-side with WeasyPrint from the same HTML template as the "
        "web view.",
    ),
    # team and preferences
    (
        "m-team-style",
        "important",
        "team",
        "s01",
        0,
        "Code style: Python formatted with ruff, line length 100, type hints everywhere, mypy strict "
        "on the backend.",
    ),
    (
        "m-team-review",
        "normal",
        "team",
        "s01",
        0,
        "Every pull request needs one approving review; the author merges after CI is green.",
    ),
    (
        "m-team-user-pref",
        "important",
        "team",
        "s05",
        8,
        "The product owner, Dana, prefers short pull requests under 400 lines and a screenshot for "
        "any UI change.",
    ),
    (
        "m-team-release",
        "normal",
        "team",
        "s08",
        17,
        "Releases go out on Tuesdays and Thursdays; no deploys on Friday afternoons.",
    ),
    (
        "m-team-standup",
        "temporary",
        "team",
        "s11",
        27,
        "Standup moved to 9:30 this week because of the offsite.",
    ),
    # the long design doc and its chunks (an equivalence class)
    (
        "m-doc-tenancy",
        "important",
        "billing",
        "s03",
        4,
        "Design doc, multi-tenancy: each request sets app.tenant_id from the session; row-level "
        "security policies on every tenant table enforce isolation; background jobs must set the "
        "tenant explicitly; cross-tenant admin reports use a separate role that bypasses RLS.",
    ),
    (
        "m-doc-tenancy-c1",
        "normal",
        "billing",
        "s03",
        4,
        "Multi-tenancy doc, part 1: each request sets app.tenant_id from the session.",
    ),
    (
        "m-doc-tenancy-c2",
        "normal",
        "billing",
        "s03",
        4,
        "Multi-tenancy doc, part 2: background jobs must set the tenant explicitly before touching "
        "tenant tables.",
    ),
    # distractors sharing words with the topics above
    (
        "m-x-postgres-meetup",
        "temporary",
        "team",
        "s09",
        20,
        "Someone shared a PostgreSQL meetup link in chat; not related to our work.",
    ),
    (
        "m-x-cookie-recipe",
        "temporary",
        "team",
        "s11",
        27,
        "Off-topic: the team's favourite cookie recipe from the offsite uses brown butter.",
    ),
    (
        "m-x-security-training",
        "normal",
        "team",
        "s06",
        13,
        "Annual security awareness training is due by the end of the quarter.",
    ),
    (
        "m-x-search-marketing",
        "normal",
        "ui",
        "s07",
        16,
        "Marketing wants the landing page to rank in web search for 'invoice software'.",
    ),
    (
        "m-ui-chart-rounding",
        "normal",
        "ui",
        "s06",
        12,
        "Revenue charts on the dashboard are rounded to whole euros for display; exports keep "
        "the exact cents.",
    ),
]

# id, text, intent, category, session context (session, working ids, turn) or None
_QueryRow = tuple[str, str, str, str, tuple[str, list[str], int] | None]
_QUERIES: list[_QueryRow] = [
    # trigger-match: the query repeats a memory's own words
    ("q-trig-argon", "Argon2id password hashing", "understand", "trigger-match", None),
    ("q-trig-keyset", "keyset pagination invoice search", "understand", "trigger-match", None),
    ("q-trig-dunning", "dunning schedule reminder emails", "understand", "trigger-match", None),
    ("q-trig-weasy", "WeasyPrint invoice PDFs", "find_spec", "trigger-match", None),
    ("q-trig-trgm", "pg_trgm similarity threshold", "understand", "trigger-match", None),
    # semantic-search: paraphrases with little word overlap
    (
        "q-sem-money",
        "how do we represent amounts of money so rounding errors cannot creep in",
        "understand",
        "semantic-search",
        None,
    ),
    (
        "q-sem-rollback",
        "what happens when a new release turns out to be broken after going live",
        "understand",
        "semantic-search",
        None,
    ),
    (
        "q-sem-login-store",
        "where is the logged-in state of a user kept between page loads",
        "understand",
        "semantic-search",
        None,
    ),
    (
        "q-sem-restore",
        "can we recover the database if the disk dies",
        "understand",
        "semantic-search",
        None,
    ),
    (
        "q-sem-alerts",
        "who gets woken up when the app starts throwing lots of errors",
        "understand",
        "semantic-search",
        None,
    ),
    (
        "q-sem-duplicates",
        "customers were charged twice for one payment notification",
        "fix_bug",
        "semantic-search",
        None,
    ),
    # causal-query: why was this decided
    (
        "q-cause-postgres",
        "why did we move billing off MySQL",
        "find_decision",
        "causal-query",
        None,
    ),
    (
        "q-cause-cookies",
        "why did we stop storing tokens in the browser",
        "find_decision",
        "causal-query",
        None,
    ),
    (
        "q-cause-batches",
        "why do big migrations now run in batches",
        "find_decision",
        "causal-query",
        None,
    ),
    (
        "q-cause-no-es",
        "why not Elasticsearch for invoice search",
        "find_decision",
        "causal-query",
        None,
    ),
    # cross-folder
    (
        "q-cross-tenant",
        "how is tenant isolation enforced from the login session down to the database",
        "understand",
        "cross-folder",
        None,
    ),
    ("q-cross-redis", "everything we keep in Redis", "understand", "cross-folder", None),
    (
        "q-cross-migrations",
        "rules and tools for changing the database schema safely",
        "add_feature",
        "cross-folder",
        None,
    ),
    # intent-specific
    (
        "q-int-security-audit",
        "security audit checklist for authentication and secrets",
        "security_audit",
        "intent-specific",
        None,
    ),
    (
        "q-int-refactor-money",
        "refactor the invoice total calculation",
        "refactor",
        "intent-specific",
        None,
    ),
    (
        "q-int-add-webhook",
        "add a new Stripe webhook handler for refunds",
        "add_feature",
        "intent-specific",
        None,
    ),
    (
        "q-int-fix-csrf",
        "form submissions fail with a 403 after the session change",
        "fix_bug",
        "intent-specific",
        None,
    ),
    (
        "q-int-pr",
        "what should a pull request look like before I ask for review",
        "add_feature",
        "intent-specific",
        None,
    ),
    # cold-start: first query of a new session, no history
    ("q-cold-stack", "what is our tech stack", "understand", "cold-start", ("s20", [], 0)),
    (
        "q-cold-rules",
        "what rules must I always follow in this repository",
        "understand",
        "cold-start",
        ("s21", [], 0),
    ),
    (
        "q-cold-deploy",
        "how do I ship a change to production",
        "understand",
        "cold-start",
        ("s22", [], 0),
    ),
    # warm queries: short follow-ups that only the session disambiguates (personalisation);
    # two per session, so that session dedup has something to save
    (
        "q-warm-tax",
        "how is it rounded",
        "understand",
        "intent-specific",
        ("s05", ["m-bill-stripe"], 6),
    ),
    (
        "q-warm-provider",
        "which provider handles the payments",
        "understand",
        "intent-specific",
        ("s05", ["m-bill-rounding"], 7),
    ),
    (
        "q-warm-webhook",
        "why were there two rows",
        "fix_bug",
        "intent-specific",
        ("s07", ["m-search-slow"], 4),
    ),
    (
        "q-warm-slow",
        "what was slow",
        "fix_bug",
        "intent-specific",
        ("s07", ["m-bill-webhook-bug"], 5),
    ),
    # multi-concept
    (
        "q-multi-stripe-idem",
        "Stripe webhooks idempotency and signature verification",
        "add_feature",
        "multi-concept",
        None,
    ),
    (
        "q-multi-2fa-recovery",
        "TOTP two-factor recovery codes hashed",
        "security_audit",
        "multi-concept",
        None,
    ),
    ("q-multi-a11y", "form labels focus states contrast", "add_feature", "multi-concept", None),
    # edge cases
    ("q-edge-symbols", 'app.tenant_id -- "RLS" (policies)?!', "understand", "edge-case", None),
    (
        "q-edge-long",
        "I am about to change how invoices are exported for each tenant and I want "
        "to be sure that nothing from one customer can ever appear in another customer's export, "
        "including in background jobs and admin reports, so what do we know about isolation, past "
        "leaks and the design we settled on",
        "security_audit",
        "edge-case",
        None,
    ),
    ("q-edge-nothing", "kubernetes helm chart values", "understand", "edge-case", None),
    (
        "q-edge-unicode",
        "Rechnungssteuer Rundung pro Zeile (German accountant)",
        "understand",
        "edge-case",
        None,
    ),
]

# query id -> {memory id: grade}
_JUDGMENTS: dict[str, dict[str, int]] = {
    "q-trig-argon": {"m-auth-password-hash": 3, "m-auth-2fa": 0},
    "q-trig-keyset": {"m-search-slow": 3, "m-search-engine": 1},
    "q-trig-dunning": {"m-bill-dunning": 3},
    "q-trig-weasy": {"m-ui-invoice-pdf": 3},
    "q-trig-trgm": {"m-search-fuzzy": 3, "m-search-engine": 1},
    "q-sem-money": {"m-bill-currency": 3, "m-bill-rounding": 2},
    "q-sem-rollback": {"m-infra-deploy": 3, "m-team-release": 1},
    "q-sem-login-store": {"m-auth-session-decision": 3, "m-infra-redis": 2, "m-auth-csrf": 1},
    "q-sem-restore": {"m-infra-backups": 3},
    "q-sem-alerts": {"m-infra-monitoring": 3},
    "q-sem-duplicates": {"m-bill-webhook-bug": 3, "m-bill-stripe": 2},
    "q-cause-postgres": {
        "m-bill-db-decision": 3,
        "m-bill-rls-problem": 3,
        "m-bill-rls-impl": 1,
        "m-x-postgres-meetup": 0,
    },
    "q-cause-cookies": {"m-auth-session-decision": 3, "m-auth-xss-review": 3, "m-auth-csrf": 1},
    "q-cause-batches": {"m-infra-outage": 3, "m-const-migrations": 1},
    "q-cause-no-es": {"m-search-engine": 3, "m-x-search-marketing": 0},
    "q-cross-tenant": {
        "m-doc-tenancy": 3,
        "m-bill-rls-impl": 3,
        "m-auth-session-decision": 2,
        "m-doc-tenancy-c1": 2,
        "m-doc-tenancy-c2": 2,
        "m-bill-rls-problem": 1,
    },
    "q-cross-redis": {"m-infra-redis": 3, "m-auth-session-decision": 2},
    "q-cross-migrations": {
        "m-const-migrations": 3,
        "m-infra-migration-tool": 3,
        "m-infra-outage": 2,
        "m-bill-db-decision": 1,
    },
    "q-int-security-audit": {
        "m-const-secrets": 3,
        "m-auth-password-hash": 3,
        "m-auth-session-decision": 2,
        "m-auth-csrf": 2,
        "m-auth-2fa": 2,
        "m-x-security-training": 0,
    },
    "q-int-refactor-money": {"m-bill-currency": 3, "m-bill-rounding": 3, "m-const-tests": 2},
    "q-int-add-webhook": {"m-bill-stripe": 3, "m-bill-webhook-bug": 2, "m-const-tests": 1},
    "q-int-fix-csrf": {"m-auth-csrf": 3, "m-auth-session-decision": 2},
    "q-int-pr": {"m-const-tests": 3, "m-team-review": 3, "m-team-user-pref": 3, "m-team-style": 2},
    "q-cold-stack": {
        "m-ui-framework": 3,
        "m-bill-db-decision": 2,
        "m-infra-deploy": 2,
        "m-infra-redis": 1,
        "m-team-style": 1,
    },
    "q-cold-rules": {
        "m-const-secrets": 3,
        "m-const-migrations": 3,
        "m-const-tests": 3,
        "m-team-style": 2,
        "m-team-review": 2,
    },
    "q-cold-deploy": {
        "m-infra-deploy": 3,
        "m-team-release": 2,
        "m-const-tests": 2,
        "m-team-review": 1,
    },
    "q-warm-tax": {"m-bill-rounding": 3, "m-bill-currency": 1, "m-ui-chart-rounding": 1},
    "q-warm-provider": {"m-bill-stripe": 3, "m-bill-webhook-bug": 1},
    "q-warm-webhook": {"m-bill-webhook-bug": 3, "m-bill-stripe": 1},
    "q-warm-slow": {"m-search-slow": 3, "m-infra-outage": 1},
    "q-multi-stripe-idem": {"m-bill-stripe": 3, "m-bill-webhook-bug": 2},
    "q-multi-2fa-recovery": {"m-auth-2fa": 3},
    "q-multi-a11y": {"m-ui-a11y": 3},
    "q-edge-symbols": {"m-bill-rls-impl": 3, "m-doc-tenancy": 2, "m-doc-tenancy-c1": 2},
    "q-edge-long": {
        "m-doc-tenancy": 3,
        "m-bill-rls-problem": 3,
        "m-bill-rls-impl": 2,
        "m-doc-tenancy-c2": 2,
        "m-bill-db-decision": 1,
    },
    # judged, but nothing in memory is relevant: scored 0 and counted, never dropped
    "q-edge-nothing": {"m-infra-deploy": 0},
    "q-edge-unicode": {"m-bill-rounding": 3},
}

_EQUIVALENCE = [
    ("eq-tenancy-doc", ["m-doc-tenancy", "m-doc-tenancy-c1", "m-doc-tenancy-c2"]),
]

_CHAINS = [
    (
        "chain-postgres",
        ["m-bill-rls-problem", "m-bill-db-decision", "m-bill-rls-impl"],
        ["q-cause-postgres", "q-cross-tenant"],
    ),
    (
        "chain-cookies",
        ["m-auth-xss-review", "m-auth-session-decision", "m-auth-csrf"],
        ["q-cause-cookies"],
    ),
    (
        "chain-batches",
        ["m-infra-outage", "m-infra-migration-tool", "m-const-migrations"],
        ["q-cause-batches"],
    ),
]


def demo_dataset() -> RetrievalDataset:
    """Build the demo dataset (deterministic: the same objects every call)."""
    memories = [
        Memory(
            id=mid,
            text=text,
            tier=tier,
            folder=folder,
            session=session,
            created_at=_T0 + timedelta(days=day),
        )
        for mid, tier, folder, session, day, text in _MEMORIES
    ]
    queries = [
        EvalQuery(
            id=qid,
            text=text,
            intent=intent,
            category=category,
            session_context=(
                SessionContext(session_id=ctx[0], working_memory_ids=ctx[1], turn_number=ctx[2])
                if ctx is not None
                else None
            ),
        )
        for qid, text, intent, category, ctx in _QUERIES
    ]
    judgments = [
        Judgment(query_id=qid, memory_id=mid, grade=grade, source="manual", annotator="memgauge")
        for qid, grades in _JUDGMENTS.items()
        for mid, grade in grades.items()
    ]
    return RetrievalDataset(
        name="memgauge-demo",
        memories=memories,
        queries=queries,
        judgments=judgments,
        equivalence_classes=[EquivalenceClass(id=i, memory_ids=m) for i, m in _EQUIVALENCE],
        causal_chains=[CausalChain(id=i, memory_ids=m, query_ids=q) for i, m, q in _CHAINS],
    )
