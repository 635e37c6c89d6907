"""A run escalating the answers its judge is unsure of to a second judge.

- ``options``: the escalation options, the CLI's / Run page's fields as run options and the
  check that refuses an escalation that cannot run;
- ``cascade``: after the first judge's pass, the threshold (fixed or fitted on dev groups), the
  second judge's pass over the answers below it, the stored summary and its paragraph;
- ``units``: the run's decisions as the cascade sees them (an answer, or a human-voted pair);
- ``by_item``: escalation by item (an item's questions go to the second judge together);
- ``judge_calibration``: each judge's p(Yes) fitted to people's labels (Platt scaling);
- ``estimate``: the calls and both judges' cost before a start and in a run's stored estimate.
"""
