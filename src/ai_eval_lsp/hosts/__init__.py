"""Code the product does not own, run in child processes it can stop: Python executor plugins
and a Drupal codebase's PHP executors, each call bounded by `runTimeoutSeconds`."""
