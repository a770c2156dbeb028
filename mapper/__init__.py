"""StackMap: a knowledge map of AI-accelerator software stacks."""

__version__ = "0.1.0"
