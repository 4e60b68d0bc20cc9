"""Campaigns: generating suites for a whole dataset (README "Campaigns").

One run per problem moves through two stages on two queues: the LLM stage (the table of
QUEUED runs itself is the queue, claimed by `manage.py llm_worker` threads, many calls in
flight) and materialisation (an RQ job on the CPU-bound `sandbox` queue). Totals (calls,
tokens, cost) are kept on the Campaign row; a cost cap pauses it.
"""
