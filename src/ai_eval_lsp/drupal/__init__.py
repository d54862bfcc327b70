"""Drupal codebases (SPEC section 4): the PHP executors of the installed modules, read statically,
and a PHP worker that runs them for the runs a user asks for."""
