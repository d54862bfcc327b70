"""Drupal codebases (SPEC section 4), read from the files alone: the installed modules and their
PHP check executors, with the schemas `checkSchemaDefinitions()` returns. Nothing here runs PHP."""
