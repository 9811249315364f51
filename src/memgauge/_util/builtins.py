"""memgauge's own components, by entry-point group: the same table `pyproject.toml` declares
under `[project.entry-points]` (a test keeps the two equal). A registry asked for one of these
names loads it from here without reading the installed distributions; a listing reads them, and
takes this copy for a name memgauge's installed metadata lacks (a source tree whose metadata is not
installed, or is older than the code)."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["BUILTINS", "REFERENCE_MODES", "ReferenceMode"]

#: the reference memory's modes: each is also a short form of the `reference` subject kind in
#: that mode (`-s hybrid`)
ReferenceMode = Literal["lexical", "dense", "hybrid"]
REFERENCE_MODES: tuple[ReferenceMode, ...] = get_args(ReferenceMode)

BUILTINS: dict[str, dict[str, str]] = {
    "memgauge.kinds": {
        "retrieval": "memgauge.runs.kinds.retrieval:RetrievalKind",
        "expected-output": "memgauge.runs.kinds.expected_output:ExpectedOutputKind",
        "script": "memgauge.runs.kinds.script:ScriptKind",
        "kg": "memgauge.runs.kinds.kg:KGKind",
        "extraction": "memgauge.runs.kinds.extraction:ExtractionKind",
        "operations": "memgauge.runs.kinds.operations:OperationsKind",
        "embedding": "memgauge.runs.kinds.embedding:EmbeddingKind",
    },
    "memgauge.aggregates": {
        "ir": "memgauge.aggregates.ir:IRAggregate",
        "extraction": "memgauge.aggregates.write_path:ExtractionAggregate",
        "operations": "memgauge.aggregates.write_path:OperationsAggregate",
        "audit": "memgauge.aggregates.audit:AuditAggregate",
        "kg": "memgauge.aggregates.graph:KGAggregate",
        "embedding": "memgauge.aggregates.graph:EmbeddingAggregate",
        "cost": "memgauge.aggregates.cost:CostAggregate",
        "ranking": "memgauge.aggregates.ranking:RankingAggregate",
        "attribution": "memgauge.aggregates.attribution:AttributionAggregate",
        "repeats": "memgauge.aggregates.repeats:RepeatsAggregate",
    },
    "memgauge.evaluators": {
        "exact": "memgauge.scorers.text:ExactMatch",
        "contains": "memgauge.scorers.text:Contains",
        "icontains": "memgauge.scorers.text:IContains",
        "regex": "memgauge.scorers.text:Regex",
        "token_f1": "memgauge.scorers.f1:TokenF1",
        "semantic": "memgauge.scorers.semantic:SemanticSimilarity",
        "script": "memgauge.scorers.script:ScriptEvaluator",
        "retrieval": "memgauge.scorers.retrieval:RetrievalMeasure",
        "extraction": "memgauge.scorers.write_path:ExtractionFacts",
        "operation-checks": "memgauge.scorers.write_path:OperationChecks",
        "audit-match": "memgauge.scorers.audit:AuditMatch",
        "locomo-qa": "memgauge.scorers.locomo:LoCoMoQA",
        "rubric": "memgauge.scorers.judges.rubric:RubricJudge",
        "qa-judge": "memgauge.scorers.judges.qa:QAJudge",
        "facts": "memgauge.scorers.judges.facts:FactsJudge",
        "pairwise": "memgauge.scorers.judges.pairwise:PairwiseJudge",
        "panel": "memgauge.scorers.judges.panel:PanelJudge",
        "relevance": "memgauge.scorers.judges.relevance:RelevanceJudge",
        "kg-triples": "memgauge.scorers.graph:KGTriples",
        "embedding-pair": "memgauge.scorers.embedding:EmbeddingPairScore",
    },
    "memgauge.subjects": {
        "reference": "memgauge.subjects.specs:reference_memory",
        "python": "memgauge.subjects.python_import:PythonSubject",
        "subprocess": "memgauge.subjects.subprocess_jsonl:SubprocessSubject",
        "http": "memgauge.subjects.http:HttpSubject",
        "mcp": "memgauge.subjects.mcp:McpSubject",
        "langmem": "memgauge.subjects.langmem:LangMemSubject",
        "agents-session": "memgauge.subjects.agents_session:AgentsSessionSubject",
        "mem0": "memgauge.subjects.mem0:Mem0Subject",
        "chat": "memgauge.subjects.agents:ChatAgent",
        "memory-agent": "memgauge.subjects.specs:memory_agent",
        "extractive": "memgauge.subjects.agents:ExtractiveAgent",
        "llm-extractor": "memgauge.subjects.extractors:LLMExtractor",
        "memory-extractor": "memgauge.subjects.specs:memory_extractor",
        "llm-decider": "memgauge.subjects.deciders:LLMDecider",
        "heuristic-decider": "memgauge.subjects.deciders:HeuristicDecider",
        "recorded": "memgauge.subjects.recorded:RecordedSubject",
        "stored-vectors": "memgauge.subjects.vectors:StoredVectors",
    },
    "memgauge.llm_providers": {
        "openai": "memgauge.llm.openai:OpenAIClient",
        "anthropic": "memgauge.llm.anthropic:AnthropicClient",
    },
    "memgauge.embedders": {
        "minilm": "memgauge.embed.minilm:minilm",
        "openai": "memgauge.embed.openai:OpenAIEmbedder",
        "st": "memgauge.embed.st:SentenceTransformerEmbedder",
    },
}
