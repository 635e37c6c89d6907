"""Human annotation: answers to checklist questions by named annotators, import/export, and
agreement among humans and between humans and judges."""
