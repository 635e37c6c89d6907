"""Initial schema: the tables of DESIGN.md's data model.

Later issues add what they need as further migrations (m0002…); columns here are the
shared contract between the store, the judges, the checklist tools, runs and analysis.
"""

STATEMENTS = [
    # A dataset to evaluate: kind drives prompt layout, field_map records the import mapping.
    """CREATE TABLE task (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL DEFAULT 'custom'
            CHECK (kind IN ('summarization', 'dialogue', 'instruction', 'custom')),
        field_map TEXT NOT NULL DEFAULT '{}',
        description TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL
    )""",
    # One thing to judge. item_id is the user's id (unique per task); id is the internal key.
    """CREATE TABLE item (
        id INTEGER PRIMARY KEY,
        task_id INTEGER NOT NULL REFERENCES task(id) ON DELETE CASCADE,
        item_id TEXT NOT NULL,
        group_id TEXT NOT NULL DEFAULT '',
        system_id TEXT NOT NULL DEFAULT '',
        source TEXT NOT NULL DEFAULT '',
        context TEXT NOT NULL DEFAULT '',
        fact TEXT NOT NULL DEFAULT '',
        reference TEXT NOT NULL DEFAULT '',
        output TEXT NOT NULL DEFAULT '',
        metadata TEXT NOT NULL DEFAULT '{}',
        position INTEGER NOT NULL DEFAULT 0,
        UNIQUE (task_id, item_id)
    )""",
    "CREATE INDEX item_task_group ON item (task_id, group_id)",
    # Imported benchmark scores (annotator '' = the dataset's own average) or collected ones.
    """CREATE TABLE human_score (
        id INTEGER PRIMARY KEY,
        item_id INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
        dimension TEXT NOT NULL,
        value REAL NOT NULL,
        annotator TEXT NOT NULL DEFAULT '',
        UNIQUE (item_id, dimension, annotator)
    )""",
    "CREATE INDEX human_score_dim ON human_score (dimension)",
    """CREATE TABLE dimension (
        id INTEGER PRIMARY KEY,
        task_id INTEGER NOT NULL REFERENCES task(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        definition TEXT NOT NULL DEFAULT '',
        position INTEGER NOT NULL DEFAULT 0,
        UNIQUE (task_id, name)
    )""",
    """CREATE TABLE sub_dimension (
        id INTEGER PRIMARY KEY,
        dimension_id INTEGER NOT NULL REFERENCES dimension(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        position INTEGER NOT NULL DEFAULT 0,
        UNIQUE (dimension_id, name)
    )""",
    # A Yes/No question ("Yes" = better). Global questions hang off a sub-dimension; instance
    # questions (RocketEval) off an item. origins keeps every origin of a merged duplicate.
    """CREATE TABLE question (
        id INTEGER PRIMARY KEY,
        task_id INTEGER NOT NULL REFERENCES task(id) ON DELETE CASCADE,
        dimension_id INTEGER REFERENCES dimension(id) ON DELETE CASCADE,
        sub_dimension_id INTEGER REFERENCES sub_dimension(id) ON DELETE CASCADE,
        item_id INTEGER REFERENCES item(id) ON DELETE CASCADE,
        text TEXT NOT NULL,
        origin TEXT NOT NULL DEFAULT 'seed'
            CHECK (origin IN ('seed', 'diversification', 'elaboration', 'instance', 'edited')),
        origins TEXT NOT NULL DEFAULT '[]',
        parent_id INTEGER REFERENCES question(id) ON DELETE SET NULL,
        status TEXT NOT NULL DEFAULT 'proposed'
            CHECK (status IN ('proposed', 'kept', 'filtered', 'rejected')),
        reason TEXT NOT NULL DEFAULT '',
        author TEXT NOT NULL DEFAULT '',
        model TEXT NOT NULL DEFAULT '',
        prompt_version TEXT NOT NULL DEFAULT '',
        flags TEXT NOT NULL DEFAULT '[]',
        position INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX question_task ON question (task_id, dimension_id, sub_dimension_id)",
    "CREATE INDEX question_item ON question (item_id)",
    # Immutable frozen checklist; content = JSON list of the kept questions at freeze time.
    """CREATE TABLE checklist_version (
        id INTEGER PRIMARY KEY,
        task_id INTEGER NOT NULL REFERENCES task(id) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        kind TEXT NOT NULL DEFAULT 'global' CHECK (kind IN ('global', 'instance')),
        hash TEXT NOT NULL,
        content TEXT NOT NULL,
        n_questions INTEGER NOT NULL,
        note TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        UNIQUE (task_id, version)
    )""",
    # A configured judge (spec string + params). Never holds a secret.
    """CREATE TABLE judge (
        id INTEGER PRIMARY KEY,
        spec TEXT NOT NULL,
        params TEXT NOT NULL DEFAULT '{}',
        label TEXT NOT NULL DEFAULT '',
        key_env TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        UNIQUE (spec, params)
    )""",
    """CREATE TABLE run (
        id INTEGER PRIMARY KEY,
        task_id INTEGER NOT NULL REFERENCES task(id) ON DELETE CASCADE,
        checklist_version_id INTEGER REFERENCES checklist_version(id),
        judge_spec TEXT NOT NULL,
        judge_params TEXT NOT NULL DEFAULT '{}',
        method TEXT NOT NULL CHECK (method IN ('checkeval', 'rocketeval', 'seal', 'geval')),
        params TEXT NOT NULL DEFAULT '{}',
        item_ids TEXT NOT NULL DEFAULT '[]',
        status TEXT NOT NULL DEFAULT 'pending'
            CHECK (status IN ('pending', 'running', 'completed', 'failed', 'cancelled')),
        progress_done INTEGER NOT NULL DEFAULT 0,
        progress_total INTEGER NOT NULL DEFAULT 0,
        tokens_in INTEGER NOT NULL DEFAULT 0,
        tokens_out INTEGER NOT NULL DEFAULT 0,
        cost REAL NOT NULL DEFAULT 0,
        n_errors INTEGER NOT NULL DEFAULT 0,
        scoring_mode TEXT NOT NULL DEFAULT '',
        error TEXT NOT NULL DEFAULT '',
        pid INTEGER,
        heartbeat_at TEXT,
        created_at TEXT NOT NULL,
        started_at TEXT,
        finished_at TEXT
    )""",
    # One judge decision. question_id 0 = none (e.g. a G-Eval Likert answer); unit '' = the
    # whole item, else a SEAL unit key. Unique so a resumed run never stores a decision twice.
    """CREATE TABLE answer (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
        item_id INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
        question_id INTEGER NOT NULL DEFAULT 0,
        unit TEXT NOT NULL DEFAULT '',
        dimension TEXT NOT NULL DEFAULT '',
        verdict TEXT NOT NULL CHECK (verdict IN ('yes', 'no', 'invalid')),
        p_yes REAL,
        value REAL,
        mode TEXT NOT NULL DEFAULT 'text',
        raw TEXT NOT NULL DEFAULT '',
        error TEXT NOT NULL DEFAULT '',
        cached INTEGER NOT NULL DEFAULT 0,
        tokens_in INTEGER NOT NULL DEFAULT 0,
        tokens_out INTEGER NOT NULL DEFAULT 0,
        latency_ms REAL NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        UNIQUE (run_id, item_id, question_id, unit)
    )""",
    "CREATE INDEX answer_item ON answer (item_id, question_id)",
    "CREATE INDEX answer_run_dim ON answer (run_id, dimension)",
    # Aggregated score of one item on one dimension under one aggregation
    # (share_yes, mean_p_yes, weighted, supervised, likert, likert_prob, ...).
    """CREATE TABLE score (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
        item_id INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
        dimension TEXT NOT NULL,
        aggregation TEXT NOT NULL,
        value REAL,
        n_questions INTEGER NOT NULL DEFAULT 0,
        n_invalid INTEGER NOT NULL DEFAULT 0,
        UNIQUE (run_id, item_id, dimension, aggregation)
    )""",
    # SEAL semantic units of an item for one dimension (sentence, sentence pair, fact, whole).
    """CREATE TABLE seal_unit (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
        item_id INTEGER NOT NULL REFERENCES item(id) ON DELETE CASCADE,
        dimension TEXT NOT NULL,
        unit TEXT NOT NULL,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        position INTEGER NOT NULL DEFAULT 0,
        UNIQUE (run_id, item_id, dimension, unit)
    )""",
    # Response cache shared by all runs: key = sha256(backend, model, params, prompt).
    """CREATE TABLE llm_cache (
        key TEXT PRIMARY KEY,
        backend TEXT NOT NULL,
        model TEXT NOT NULL DEFAULT '',
        kind TEXT NOT NULL DEFAULT 'binary',
        response TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    # Human work: answers to checklist questions (kind 'answer') and question validations
    # (kind 'validation': keep / reject / edit with a reason).
    """CREATE TABLE annotation (
        id INTEGER PRIMARY KEY,
        task_id INTEGER NOT NULL REFERENCES task(id) ON DELETE CASCADE,
        annotator TEXT NOT NULL,
        kind TEXT NOT NULL DEFAULT 'answer' CHECK (kind IN ('answer', 'validation')),
        item_id INTEGER REFERENCES item(id) ON DELETE CASCADE,
        question_id INTEGER NOT NULL REFERENCES question(id) ON DELETE CASCADE,
        value TEXT NOT NULL,
        reason TEXT NOT NULL DEFAULT '',
        job_id INTEGER,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    )""",
    "CREATE UNIQUE INDEX annotation_unique ON annotation "
    "(task_id, annotator, kind, IFNULL(item_id, 0), question_id, IFNULL(job_id, 0))",
]


def apply(db) -> None:
    for sql in STATEMENTS:
        db.execute(sql)
