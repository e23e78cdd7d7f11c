console.log(
  'agent-machine demo: not yet. The agent loop lands with issue #3; the state model is ready (see README).',
);
