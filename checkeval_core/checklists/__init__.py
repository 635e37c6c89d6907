"""Checklists: dimensions, sub-dimensions and Yes/No questions; import/export, LLM augmentation
and filtering, human review, frozen versions, RocketEval instance checklists."""
