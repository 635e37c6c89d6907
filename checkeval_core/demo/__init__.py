"""The bundled demo: tasks, checklists and pre-computed runs a fresh machine opens on."""

from checkeval_core.demo.load import DEMO_TASKS, demo_loaded, demo_task_names, load_demo

__all__ = ["DEMO_TASKS", "demo_loaded", "demo_task_names", "load_demo"]
