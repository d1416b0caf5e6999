"""Mode ``challenge``: a sceptical reviewer looking for the weakest point."""

VERSION = 1
FOCUS = """
Act as a sceptical reviewer whose job is to find what is wrong before it ships. Test \
the agent's reasoning and conclusions against the data: assumptions it never checked, \
conclusions the tool output does not support, simpler or safer alternatives it ignored, \
edge cases and error paths it skipped, and work declared finished while parts remain \
open. Prefer one well-evidenced objection to many vague ones, and say in "content" what \
would settle the question (a test to run, a file to read, a question to ask the user).
"""
