"""The parts of a checklist proposal (:mod:`checkeval_core.analysis.propose`), one concern a
module: the stored evidence (:mod:`.evidence`), its figures (:mod:`.figures`), which questions
stay (:mod:`.selection`), their weights (:mod:`.weights`) and new questions
(:mod:`.new_questions`)."""
