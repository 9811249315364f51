"""`python -m memgauge.llm`: serve the fake OpenAI-compatible server (see `fake_server.main`)."""

from memgauge.llm.fake_server import main

main()
