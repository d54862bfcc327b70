"""The event loop's side of the server: the session (all its state), its owner the server, and
what runs on the loop and changes the session: the scheduler of analyses, the project folders'
lifecycle, text sync, the client's lifecycle, how a reading request's snapshot is taken, the
routes' registration."""
