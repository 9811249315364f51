-- revision 0024
CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);

CREATE TABLE eval_ab_tests (
	id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, 
	feature_id TEXT NOT NULL, 
	status TEXT NOT NULL, 
	log_likelihood_ratio DOUBLE DEFAULT '0' NOT NULL, 
	upper_bound DOUBLE NOT NULL, 
	lower_bound DOUBLE NOT NULL, 
	sample_count INTEGER DEFAULT '0' NOT NULL, 
	control_mrr_sum DOUBLE, 
	treatment_mrr_sum DOUBLE, 
	control_ndcg_sum DOUBLE, 
	treatment_ndcg_sum DOUBLE, 
	min_samples INTEGER DEFAULT '100' NOT NULL, 
	graduation_threshold DOUBLE DEFAULT '0.03' NOT NULL, 
	started_at TEXT NOT NULL, 
	updated_at TEXT NOT NULL, 
	graduated_at TEXT, 
	metric TEXT NOT NULL, 
	config_json TEXT NOT NULL, 
	state_json TEXT NOT NULL, 
	CONSTRAINT ck_eval_ab_status CHECK (status IN ('running', 'graduated', 'rejected', 'paused')), 
	UNIQUE (feature_id)
);

CREATE INDEX idx_eval_ab_status ON eval_ab_tests (status);

CREATE TABLE eval_feedback (
	id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, 
	event_type TEXT NOT NULL, 
	session_id TEXT NOT NULL, 
	query_id TEXT, 
	memory_id TEXT, 
	rank_in_results INTEGER, 
	metadata TEXT DEFAULT '{}', 
	created_at TEXT NOT NULL, 
	CONSTRAINT ck_eval_feedback_event CHECK (event_type IN ('read_after_search', 're_search', 'scroll_past', 'reference', 'validate_useful', 'validate_not_useful'))
);

CREATE INDEX idx_eval_feedback_query ON eval_feedback (query_id);

CREATE TABLE eval_judgments (
	id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, 
	query_id TEXT NOT NULL, 
	memory_id TEXT NOT NULL, 
	relevance INTEGER NOT NULL, 
	source TEXT NOT NULL, 
	annotator TEXT, 
	confidence DOUBLE DEFAULT '1.0', 
	created_at TEXT NOT NULL, 
	CONSTRAINT ck_eval_judgments_source CHECK (source IN ('manual', 'implicit', 'bootstrapped', 'validated')), 
	CONSTRAINT ck_eval_judgments_relevance CHECK (relevance BETWEEN 0 AND 3), 
	UNIQUE (query_id, memory_id, source)
);

CREATE TABLE eval_queries (
	id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, 
	query_id TEXT NOT NULL, 
	"query" TEXT NOT NULL, 
	intent TEXT, 
	mode TEXT, 
	session_id TEXT, 
	tool_name TEXT NOT NULL, 
	result_ids TEXT DEFAULT '[]' NOT NULL, 
	result_count INTEGER DEFAULT '0' NOT NULL, 
	channel_contributions TEXT DEFAULT '{}', 
	total_latency_ms DOUBLE, 
	fusion_weights TEXT, 
	quality_proxy_score DOUBLE, 
	trace_id TEXT, 
	created_at TEXT NOT NULL, 
	is_eval_corpus INTEGER DEFAULT '0' NOT NULL, 
	eval_category TEXT, fallback_triggered INTEGER, fallback_reason TEXT, degraded_mode INTEGER, stage_trace TEXT, harvested_at TEXT, token_usage_ratio DOUBLE, pressure_level TEXT, avg_relevance_score DOUBLE, top_result_score DOUBLE, boost_impact_delta DOUBLE, dedup_tokens_saved INTEGER, 
	UNIQUE (query_id)
);

CREATE INDEX idx_eval_queries_created ON eval_queries (created_at);

CREATE INDEX idx_eval_queries_session ON eval_queries (session_id);

CREATE TABLE eval_results (
	id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, 
	run_id TEXT NOT NULL, 
	run_type TEXT NOT NULL, 
	feature_id TEXT, 
	system TEXT NOT NULL, 
	mrr_at_5 DOUBLE, 
	mrr_at_10 DOUBLE, 
	ndcg_at_5 DOUBLE, 
	ndcg_at_10 DOUBLE, 
	ndcg_at_20 DOUBLE, 
	recall_at_5 DOUBLE, 
	recall_at_10 DOUBLE, 
	constitutional_surfacing_rate DOUBLE, 
	importance_weighted_recall DOUBLE, 
	cold_start_mrr DOUBLE, 
	session_personalization_lift DOUBLE, 
	causal_chain_completeness DOUBLE, 
	avg_latency_ms DOUBLE, 
	channel_contribution_json TEXT, 
	result_diversity_score DOUBLE, 
	query_count INTEGER NOT NULL, 
	confidence_interval_lower DOUBLE, 
	confidence_interval_upper DOUBLE, 
	control_run_id TEXT, 
	control_system TEXT, 
	mrr_delta DOUBLE, 
	ndcg_delta DOUBLE, 
	p_value DOUBLE, 
	is_significant INTEGER, 
	created_at TEXT NOT NULL, 
	per_query_results TEXT, 
	CONSTRAINT ck_eval_results_type CHECK (run_type IN ('full', 'shadow', 'regression', 'ab_test')), 
	UNIQUE (run_id, system)
);

CREATE INDEX idx_eval_results_created ON eval_results (created_at);

CREATE INDEX idx_eval_results_feature ON eval_results (feature_id);

CREATE INDEX idx_eval_results_run ON eval_results (run_id);

CREATE INDEX idx_eval_results_type ON eval_results (run_type);

CREATE TABLE eval_shadow_runs (
	id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, 
	query_id TEXT NOT NULL, 
	feature_id TEXT NOT NULL, 
	control_result_ids TEXT NOT NULL, 
	treatment_result_ids TEXT, 
	rank_correlation DOUBLE, 
	set_overlap DOUBLE, 
	top_result_changed INTEGER, 
	order_differences INTEGER, 
	mrr_delta DOUBLE, 
	ndcg_delta DOUBLE, 
	control_latency_ms DOUBLE, 
	treatment_latency_ms DOUBLE, 
	created_at TEXT NOT NULL, 
	spearman_rho DOUBLE, 
	classification TEXT, 
	error TEXT, intent TEXT, session_id TEXT, log_level TEXT, query_text TEXT, control_mrr DOUBLE, treatment_mrr DOUBLE, control_ndcg DOUBLE, treatment_ndcg DOUBLE, 
	CONSTRAINT ck_eval_shadow_outcome CHECK (error IS NOT NULL OR treatment_result_ids IS NOT NULL)
);

CREATE INDEX idx_eval_shadow_created ON eval_shadow_runs (created_at);

CREATE INDEX idx_eval_shadow_feature ON eval_shadow_runs (feature_id);

CREATE TABLE memory_confidence (
	memory_id TEXT NOT NULL, 
	confidence DOUBLE NOT NULL, 
	validations INTEGER NOT NULL, 
	updated_at TEXT NOT NULL, 
	PRIMARY KEY (memory_id)
);

CREATE TABLE suite_runs (
	run_id TEXT NOT NULL, 
	suite_name TEXT NOT NULL, 
	status TEXT NOT NULL, 
	reason TEXT, 
	created_at TEXT NOT NULL, 
	started_at TEXT, 
	finished_at TEXT, 
	heartbeat_at TEXT, 
	pid INTEGER, 
	host TEXT, 
	suite_sha256 TEXT NOT NULL, 
	suite_json TEXT NOT NULL, 
	suite_path TEXT, 
	settings_json TEXT NOT NULL, 
	provenance_json TEXT NOT NULL, 
	n_items INTEGER NOT NULL, 
	summary_json TEXT, 
	pid_start TEXT, 
	owner TEXT, 
	kind TEXT DEFAULT 'suite' NOT NULL, gate TEXT CONSTRAINT ck_suite_runs_gate CHECK (gate IS NULL OR gate IN ('pass', 'fail', 'accepted')), headline_json TEXT, 
	PRIMARY KEY (run_id), 
	CONSTRAINT ck_suite_runs_status CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled'))
);

CREATE INDEX idx_suite_runs_suite ON suite_runs (suite_name, created_at);

CREATE TABLE eval_ab_test_pairs (
	feature_id TEXT NOT NULL, 
	seq INTEGER NOT NULL, 
	query_id TEXT, 
	control DOUBLE NOT NULL, 
	treatment DOUBLE NOT NULL, 
	control_latency_ms DOUBLE, 
	treatment_latency_ms DOUBLE, 
	constitutional_delta DOUBLE, shadow_run_id INTEGER, pair_key TEXT, 
	PRIMARY KEY (feature_id, seq), 
	FOREIGN KEY(feature_id) REFERENCES eval_ab_tests (feature_id) ON DELETE CASCADE
);

CREATE TABLE suite_run_failures (
	failure_id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, 
	run_id TEXT NOT NULL, 
	subject TEXT NOT NULL, 
	task TEXT NOT NULL, 
	item_id TEXT, 
	stage TEXT NOT NULL, 
	kind TEXT NOT NULL, 
	message TEXT NOT NULL, 
	attempt INTEGER NOT NULL, 
	at TEXT NOT NULL, 
	FOREIGN KEY(run_id) REFERENCES suite_runs (run_id) ON DELETE CASCADE
);

CREATE INDEX idx_suite_run_failures_run ON suite_run_failures (run_id, subject, task);

CREATE TABLE suite_run_items (
	run_id TEXT NOT NULL, 
	subject TEXT NOT NULL, 
	task TEXT NOT NULL, 
	item_id TEXT NOT NULL, 
	seq INTEGER NOT NULL, 
	status TEXT NOT NULL, 
	attempts INTEGER DEFAULT '0' NOT NULL, 
	category TEXT, 
	input_json TEXT NOT NULL, 
	expected_json TEXT NOT NULL, 
	score DOUBLE, 
	started_at TEXT, 
	finished_at TEXT, 
	duration_ms DOUBLE, repeat_index INTEGER DEFAULT '0' NOT NULL, verdicts_digest TEXT, 
	PRIMARY KEY (run_id, subject, task, item_id), 
	CONSTRAINT ck_suite_run_items_status CHECK (status IN ('queued', 'running', 'completed', 'failed', 'cancelled')), 
	FOREIGN KEY(run_id) REFERENCES suite_runs (run_id) ON DELETE CASCADE
);

CREATE INDEX idx_suite_run_items_status ON suite_run_items (run_id, status);

CREATE TABLE suite_run_setups (
	run_id TEXT NOT NULL, 
	subject TEXT NOT NULL, 
	task TEXT NOT NULL, 
	corpus TEXT, 
	seconds DOUBLE NOT NULL, 
	at TEXT NOT NULL, 
	FOREIGN KEY(run_id) REFERENCES suite_runs (run_id) ON DELETE CASCADE
);

CREATE INDEX idx_suite_run_setups ON suite_run_setups (run_id);

CREATE TABLE suite_run_subjects (
	run_id TEXT NOT NULL, 
	subject TEXT NOT NULL, 
	spec_json TEXT NOT NULL, 
	PRIMARY KEY (run_id, subject), 
	FOREIGN KEY(run_id) REFERENCES suite_runs (run_id) ON DELETE CASCADE
);

CREATE TABLE suite_run_tasks (
	run_id TEXT NOT NULL, 
	task TEXT NOT NULL, 
	kind TEXT NOT NULL, 
	dataset TEXT, 
	dataset_sha256 TEXT, 
	spec_json TEXT NOT NULL, 
	n_items INTEGER NOT NULL, seq INTEGER, 
	PRIMARY KEY (run_id, task), 
	FOREIGN KEY(run_id) REFERENCES suite_runs (run_id) ON DELETE CASCADE
);

CREATE TABLE suite_run_usage (
	run_id TEXT NOT NULL, 
	model TEXT NOT NULL, 
	calls INTEGER DEFAULT '0' NOT NULL, 
	cached INTEGER DEFAULT '0' NOT NULL, 
	requests INTEGER DEFAULT '0' NOT NULL, 
	failures INTEGER DEFAULT '0' NOT NULL, 
	prompt_tokens INTEGER DEFAULT '0' NOT NULL, 
	completion_tokens INTEGER DEFAULT '0' NOT NULL, 
	PRIMARY KEY (run_id, model), 
	FOREIGN KEY(run_id) REFERENCES suite_runs (run_id) ON DELETE CASCADE
);

CREATE TABLE suite_run_outputs (
	run_id TEXT NOT NULL, 
	subject TEXT NOT NULL, 
	task TEXT NOT NULL, 
	item_id TEXT NOT NULL, 
	output_json TEXT NOT NULL, 
	latency_json TEXT NOT NULL, 
	extra_json TEXT, 
	PRIMARY KEY (run_id, subject, task, item_id), 
	FOREIGN KEY(run_id, subject, task, item_id) REFERENCES suite_run_items (run_id, subject, task, item_id) ON DELETE CASCADE
);

CREATE TABLE suite_run_scores (
	run_id TEXT NOT NULL, 
	subject TEXT NOT NULL, 
	task TEXT NOT NULL, 
	item_id TEXT NOT NULL, 
	evaluator TEXT NOT NULL, 
	value DOUBLE, 
	passed INTEGER, 
	reason TEXT NOT NULL, 
	error TEXT, 
	detail_json TEXT NOT NULL, 
	raw_reply TEXT, seq INTEGER, 
	PRIMARY KEY (run_id, subject, task, item_id, evaluator), 
	FOREIGN KEY(run_id, subject, task, item_id) REFERENCES suite_run_items (run_id, subject, task, item_id) ON DELETE CASCADE
);

CREATE TABLE optimization_studies (
	study_id TEXT NOT NULL, 
	suite_name TEXT NOT NULL, 
	suite_path TEXT, 
	task TEXT NOT NULL, 
	measure TEXT NOT NULL, 
	subject TEXT NOT NULL, 
	strategy TEXT NOT NULL, 
	status TEXT NOT NULL, 
	stopped_because TEXT, 
	config_json TEXT NOT NULL, 
	best_step INTEGER, 
	best_candidate INTEGER, 
	holdout_json TEXT, 
	usage_json TEXT DEFAULT '{}' NOT NULL, 
	pid INTEGER, 
	pid_start TEXT, 
	host TEXT, 
	created_at TEXT NOT NULL, 
	updated_at TEXT NOT NULL, 
	finished_at TEXT, 
	PRIMARY KEY (study_id), 
	CONSTRAINT ck_optimization_studies_status CHECK (status IN ('running', 'completed', 'cancelled', 'failed'))
);

CREATE INDEX idx_optimization_studies_created ON optimization_studies (created_at);

CREATE TABLE optimization_iterations (
	study_id TEXT NOT NULL, 
	phase TEXT NOT NULL, 
	step INTEGER NOT NULL, 
	candidate INTEGER NOT NULL, 
	target TEXT NOT NULL, 
	status TEXT NOT NULL, 
	params_json TEXT NOT NULL, 
	texts_json TEXT NOT NULL, 
	run_id TEXT, 
	score DOUBLE, 
	ci_low DOUBLE, 
	ci_high DOUBLE, 
	delta DOUBLE, 
	delta_ci_low DOUBLE, 
	delta_ci_high DOUBLE, 
	baseline_delta DOUBLE, 
	baseline_delta_ci_low DOUBLE, 
	baseline_delta_ci_high DOUBLE, 
	accepted INTEGER, 
	values_json TEXT, 
	note TEXT, 
	reason TEXT, 
	started_at TEXT NOT NULL, 
	finished_at TEXT, 
	seconds DOUBLE, constraint_value DOUBLE, 
	PRIMARY KEY (study_id, phase, step, candidate), 
	CONSTRAINT ck_optimization_iterations_phase CHECK (phase IN ('tune', 'holdout')), 
	CONSTRAINT ck_optimization_iterations_status CHECK (status IN ('running', 'completed', 'failed')), 
	FOREIGN KEY(study_id) REFERENCES optimization_studies (study_id) ON DELETE CASCADE
);

CREATE INDEX idx_optimization_iterations_run ON optimization_iterations (run_id);

CREATE TABLE eval_flags (
	feature_id TEXT NOT NULL, 
	rollout_percent DOUBLE NOT NULL, 
	shadow_enabled INTEGER NOT NULL, 
	shadow_percent DOUBLE NOT NULL, 
	min_samples INTEGER NOT NULL, 
	graduation_threshold DOUBLE NOT NULL, 
	feed_ab INTEGER NOT NULL, 
	created_at TEXT NOT NULL, 
	updated_at TEXT NOT NULL, 
	PRIMARY KEY (feature_id), 
	CONSTRAINT ck_eval_flags_rollout CHECK (rollout_percent >= 0 AND rollout_percent <= 100), 
	CONSTRAINT ck_eval_flags_shadow CHECK (shadow_percent >= 0 AND shadow_percent <= 100)
);

CREATE TABLE eval_shadow_drops (
	feature_id TEXT NOT NULL, 
	dropped INTEGER NOT NULL, 
	updated_at TEXT NOT NULL, 
	PRIMARY KEY (feature_id)
);

CREATE TABLE eval_sessions (
	session_id TEXT NOT NULL, 
	turns INTEGER, 
	started_at TEXT NOT NULL, 
	ended_at TEXT, 
	updated_at TEXT NOT NULL, 
	metadata TEXT DEFAULT '{}', 
	PRIMARY KEY (session_id)
);

CREATE TABLE eval_outcomes (
	id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, 
	session_id TEXT NOT NULL, 
	task_id TEXT, 
	success INTEGER, 
	score DOUBLE, 
	knowledge_delta DOUBLE, 
	uncertainty_reduction DOUBLE, 
	learning_index DOUBLE, 
	spec_folder TEXT, 
	metadata TEXT DEFAULT '{}', 
	created_at TEXT NOT NULL, 
	CONSTRAINT ck_eval_outcomes_success CHECK (success IS NULL OR success IN (0, 1))
);

CREATE INDEX idx_eval_outcomes_session ON eval_outcomes (session_id);

CREATE TABLE eval_agent_outputs (
	id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, 
	session_id TEXT NOT NULL, 
	query_id TEXT, 
	text TEXT NOT NULL, 
	created_at TEXT NOT NULL
);

CREATE INDEX idx_eval_agent_outputs_session ON eval_agent_outputs (session_id);

CREATE UNIQUE INDEX ux_eval_ab_test_pairs_key ON eval_ab_test_pairs (feature_id, pair_key);

CREATE INDEX idx_suite_run_items_seq ON suite_run_items (run_id, subject, task, seq);

CREATE TABLE review_labels (
	id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, 
	run_id TEXT NOT NULL, 
	subject TEXT NOT NULL, 
	task TEXT NOT NULL, 
	item_id TEXT NOT NULL, 
	kind TEXT NOT NULL, 
	target TEXT DEFAULT '' NOT NULL, 
	reviewer TEXT NOT NULL, 
	grade INTEGER, 
	label TEXT, 
	machine TEXT, 
	note TEXT DEFAULT '' NOT NULL, 
	created_at TEXT NOT NULL, 
	CONSTRAINT ck_review_labels_kind CHECK (kind IN ('hit', 'verdict', 'fact', 'operation')), 
	CONSTRAINT ck_review_labels_grade CHECK (grade IS NULL OR grade BETWEEN 0 AND 3)
);

CREATE INDEX idx_review_labels_item ON review_labels (run_id, subject, task, item_id);

CREATE TABLE traces (
	trace_id TEXT NOT NULL, 
	format TEXT NOT NULL, 
	source TEXT NOT NULL, 
	session_id TEXT, 
	root_span_id TEXT, 
	root_name TEXT, 
	start_ns BIGINT, 
	end_ns BIGINT, 
	answer TEXT, 
	error TEXT, 
	n_spans INTEGER NOT NULL, 
	n_retrievals INTEGER NOT NULL, 
	n_tool_calls INTEGER NOT NULL, 
	n_llm_calls INTEGER NOT NULL, 
	prompt_tokens INTEGER, 
	completion_tokens INTEGER, 
	total_tokens INTEGER, 
	imported_at TEXT NOT NULL, 
	PRIMARY KEY (trace_id)
);

CREATE INDEX idx_traces_session ON traces (session_id, start_ns);

CREATE INDEX idx_traces_start ON traces (start_ns);

CREATE TABLE trace_spans (
	trace_id TEXT NOT NULL, 
	span_id TEXT NOT NULL, 
	seq INTEGER NOT NULL, 
	parent_id TEXT, 
	kind TEXT, 
	name TEXT, 
	session_id TEXT, 
	start_ns BIGINT, 
	end_ns BIGINT, 
	line INTEGER, 
	error TEXT, 
	input_json TEXT, 
	output_json TEXT, 
	tags_json TEXT DEFAULT '[]' NOT NULL, 
	"query" TEXT, 
	hits_json TEXT, 
	latency_ms DOUBLE, 
	tool_name TEXT, 
	tool_args_json TEXT, 
	tool_result_json TEXT, 
	tool_error TEXT, 
	model TEXT, 
	prompt_tokens INTEGER, 
	completion_tokens INTEGER, 
	total_tokens INTEGER, 
	llm_output TEXT, 
	llm_error TEXT, 
	PRIMARY KEY (trace_id, span_id), 
	FOREIGN KEY(trace_id) REFERENCES traces (trace_id) ON DELETE CASCADE
);

CREATE TABLE suite_run_values (
	run_id TEXT NOT NULL, 
	subject TEXT NOT NULL, 
	task TEXT NOT NULL, 
	evaluator TEXT NOT NULL, 
	item_ids_json TEXT NOT NULL, 
	values_f8 BLOB NOT NULL, 
	PRIMARY KEY (run_id, subject, task, evaluator), 
	FOREIGN KEY(run_id) REFERENCES suite_runs (run_id) ON DELETE CASCADE
);

CREATE TABLE suite_run_queries (
	run_id TEXT NOT NULL, 
	task TEXT NOT NULL, 
	subject TEXT NOT NULL, 
	query_id TEXT NOT NULL, 
	detail_json TEXT NOT NULL, 
	PRIMARY KEY (run_id, task, subject, query_id), 
	FOREIGN KEY(run_id) REFERENCES suite_runs (run_id) ON DELETE CASCADE
);

CREATE TABLE suite_run_search (
	run_id TEXT NOT NULL, 
	subject TEXT NOT NULL, 
	task TEXT NOT NULL, 
	item_id TEXT NOT NULL, 
	doc TEXT NOT NULL, 
	PRIMARY KEY (run_id, subject, task, item_id), 
	FOREIGN KEY(run_id, subject, task, item_id) REFERENCES suite_run_items (run_id, subject, task, item_id) ON DELETE CASCADE
);

CREATE TABLE suite_run_compared (
	run_id TEXT NOT NULL, 
	baseline_id TEXT NOT NULL, 
	state_key TEXT NOT NULL, 
	payload_json TEXT NOT NULL, 
	PRIMARY KEY (run_id, baseline_id), 
	FOREIGN KEY(run_id) REFERENCES suite_runs (run_id) ON DELETE CASCADE, 
	FOREIGN KEY(baseline_id) REFERENCES suite_runs (run_id) ON DELETE CASCADE
);

