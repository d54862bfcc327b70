<?php
/**
 * @file
 * The ai-eval-lsp PHP worker: runs Drupal check executors (services tagged
 * `ai_eval.check_executor`) outside Drupal, for the runs a user asks for.
 *
 * ai_eval_lsp/drupal/worker.py starts it as `php -r <loader>`: the loader
 * reports the PHP version and, on PHP 8.1 or later, evaluates this code
 * without its opening tag (line numbers stay those of this file). Every
 * protocol message is one line of JSON on STDIN or STDOUT, written after a
 * "\x02" byte so that whatever an executor writes to STDOUT itself can be
 * told apart from the protocol. worker.py's docstring lists the messages.
 *
 * There is deliberately no strict_types declaration: Drupal's container
 * constructs services from code in PHP's default coercive mode, and so must
 * the worker, for scalar constructor arguments to behave as they do there.
 */

namespace AiEvalLsp\Worker {

  const MARK = "\x02";
  const CHRF = 'ai_eval.chrf_scorer';
  const RESOLVER = 'ai_eval.check_template_resolver';
  const EXECUTOR_INTERFACE = 'Drupal\ai_eval\CheckExecutorInterface';
  const OUTCOME_CLASS = 'Drupal\ai_eval\CheckOutcome';
  const FATAL_ERRORS = E_ERROR | E_PARSE | E_CORE_ERROR | E_COMPILE_ERROR | E_USER_ERROR | E_RECOVERABLE_ERROR;

  /**
   * Writes one protocol message.
   */
  function send(array $message): void {
    $flags = JSON_INVALID_UTF8_SUBSTITUTE | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION;
    try {
      $json = json_encode($message, $flags | JSON_THROW_ON_ERROR);
    }
    catch (\JsonException $e) {
      $json = json_encode([
        'id' => $message['id'] ?? NULL,
        'error' => ['message' => 'the PHP worker could not encode its answer as JSON: ' . $e->getMessage()],
      ], $flags);
    }
    $line = MARK . $json . "\n";
    // fwrite() bypasses output buffering; a pipe may take a long line in parts.
    while ($line !== '') {
      $written = fwrite(STDOUT, $line);
      if ($written === FALSE || $written === 0) {
        // Python closed the pipe: nobody is left to answer.
        exit(1);
      }
      $line = substr($line, $written);
    }
    fflush(STDOUT);
  }

  /**
   * The next protocol message, or NULL when Python has closed the pipe.
   *
   * @throws \JsonException
   */
  function receive(): ?array {
    $line = fgets(STDIN);
    if ($line === FALSE) {
      return NULL;
    }
    $message = json_decode($line, TRUE, 100000, JSON_THROW_ON_ERROR);
    if (!is_array($message)) {
      throw new \JsonException('a message must be a JSON object');
    }
    return $message;
  }

  /**
   * Asks the Python side to answer for a bridged service: a request of its own
   * in the middle of Python's, answered before PHP goes on.
   */
  function askPython(string $service, string $method, array $params): mixed {
    static $asked = 0;
    $id = 'php-' . ++$asked;
    send(['id' => $id, 'method' => $method, 'params' => $params]);
    $answer = receive();
    if ($answer === NULL) {
      exit(0);
    }
    if (array_key_exists('error', $answer)) {
      throw new \RuntimeException("the bridged service `@$service` failed: " . ($answer['error']['message'] ?? ''));
    }
    return $answer['result'] ?? NULL;
  }

  /**
   * Fails the running check: a bridged service was asked for a method it lacks.
   */
  function bridgeFault(string $service, string $method): never {
    $message = "the bridged service `@$service` has no method `$method`";
    // Recorded as well as thrown, so an executor that catches it still fails.
    Worker::$bridgeFault ??= $message;
    throw new MissingBridgeMethod($message);
  }

  /**
   * A bridged service was called with a method it lacks.
   *
   * An \Error, as for any undefined method, so `catch (\Exception)` passes it on.
   */
  final class MissingBridgeMethod extends \Error {}

  /**
   * A check fails with this message as its reason.
   */
  final class Failure extends \Exception {}

  /**
   * `@ai_eval.chrf_scorer`, answered by the Python chrF scorer (sacrebleu).
   */
  final class ChrfScorerBridge {

    /**
     * Sentence chrF, 0..1: the best score over the reference variants.
     */
    public function score(string $hypothesis, string|array $references): float {
      foreach ((array) $references as $key => $reference) {
        if (!is_string($reference)) {
          throw new \TypeError(sprintf('`@%s` score(): Argument #2 ($references) must be a string or a list of strings, %s found at key %s', CHRF, get_debug_type($reference), $key));
        }
      }
      $variants = is_string($references) ? [$references] : array_values($references);
      return (float) askPython(CHRF, 'chrf', ['hypothesis' => $hypothesis, 'references' => $variants]);
    }

    public function __call(string $name, array $arguments): never {
      bridgeFault(CHRF, $name);
    }

  }

  /**
   * `@ai_eval.check_template_resolver`, answered by the Python dot-path resolver.
   */
  final class TemplateResolverBridge {

    /**
     * The string, or list of strings, at a dot-path of the question; NULL otherwise.
     */
    public function resolve(string $path, array $question): string|array|null {
      return askPython(RESOLVER, 'resolve', ['path' => $path, 'question' => $question]);
    }

    public function __call(string $name, array $arguments): never {
      bridgeFault(RESOLVER, $name);
    }

  }

  /**
   * Bridges that satisfy the type a constructor declares for a bridged service.
   *
   * An executor may type its parameter with ai_eval's own class or interface
   * (`ChrfScorerInterface $chrf`). The adapter is a generated subclass or
   * implementation of that type: the bridged method calls Python, any other
   * method fails the check as a missing bridge method.
   */
  final class Adapters {

    /**
     * @var array<string, string|null>
     *   Generated class names by service and type; NULL where none can be.
     */
    private static array $classes = [];

    public static function bridge(string $service, ?\ReflectionType $declared): object {
      $plain = $service === CHRF ? new ChrfScorerBridge() : new TemplateResolverBridge();
      $type = self::requiredClass($declared);
      if ($type === NULL) {
        return $plain;
      }
      $key = "$service>$type";
      if (!array_key_exists($key, self::$classes)) {
        self::$classes[$key] = self::declare($service, $type);
      }
      $class = self::$classes[$key];
      return $class === NULL ? $plain : (new \ReflectionClass($class))->newInstanceWithoutConstructor();
    }

    /**
     * The class or interface a parameter requires, or NULL when any object will do.
     */
    private static function requiredClass(?\ReflectionType $declared): ?string {
      $named = match (TRUE) {
        $declared instanceof \ReflectionNamedType => [$declared],
        $declared instanceof \ReflectionUnionType => $declared->getTypes(),
        default => [],
      };
      $classes = [];
      foreach ($named as $type) {
        if (!$type instanceof \ReflectionNamedType) {
          continue;
        }
        $name = $type->getName();
        if (in_array($name, ['object', 'mixed'], TRUE)) {
          return NULL;
        }
        if (!$type->isBuiltin() && !in_array(strtolower($name), ['self', 'parent', 'static'], TRUE)) {
          $classes[] = $name;
        }
      }
      return $classes[0] ?? NULL;
    }

    private static function declare(string $service, string $type): ?string {
      if (!class_exists($type) && !interface_exists($type)) {
        if (!str_starts_with($type, 'Drupal\ai_eval\\')) {
          return NULL;
        }
        // The codebase lacks ai_eval, so the type exists only where the
        // executor names it: an empty interface stands in for it.
        $split = strrpos($type, '\\');
        eval('namespace ' . substr($type, 0, $split) . '; interface ' . substr($type, $split + 1) . ' {}');
      }
      $reflection = new \ReflectionClass($type);
      if ($reflection->isFinal() || $reflection->isEnum() || $reflection->isTrait()) {
        return NULL;
      }
      $bridged = $service === CHRF ? 'score' : 'resolve';
      $plainClass = $service === CHRF ? ChrfScorerBridge::class : TemplateResolverBridge::class;
      $plain = "\\$plainClass";
      $fault = '\\' . __NAMESPACE__ . '\bridgeFault(' . var_export($service, TRUE) . ', ';
      $methods = [];
      $hasCall = $reflection->hasMethod('__call');
      if (!$reflection->hasMethod($bridged)) {
        // The bridge's own signature: its types hold for callers in strict mode too.
        $methods[] = signature(new \ReflectionMethod($plainClass, $bridged)) . " { return (new $plain())->$bridged(...func_get_args()); }";
      }
      foreach ($reflection->getMethods() as $method) {
        $name = $method->getName();
        $isCall = strcasecmp($name, '__call') === 0;
        $skipped = $method->isFinal() || $method->isPrivate()
          || (!$method->isAbstract() && (!$method->isPublic() || (str_starts_with($name, '__') && !$isCall)));
        if ($skipped) {
          continue;
        }
        $body = match (TRUE) {
          strcasecmp($name, $bridged) === 0 => "return (new $plain())->$bridged(...func_get_args());",
          $isCall => $fault . 'func_get_arg(0));',
          default => $fault . var_export($name, TRUE) . ');',
        };
        $methods[] = signature($method) . " { $body }";
      }
      if (!$hasCall) {
        $methods[] = 'public function __call($name, $arguments) { ' . $fault . '$name); }';
      }
      // Named after the type, so PHP's messages about it read naturally.
      $class = 'AiEvalLsp\Bridge\\' . ($service === CHRF ? 'Chrf' : 'Resolver') . "\\$type";
      $split = strrpos($class, '\\');
      $readonly = method_exists($reflection, 'isReadOnly') && $reflection->isReadOnly() ? 'readonly ' : '';
      $relation = $reflection->isInterface() ? 'implements' : 'extends';
      eval('namespace ' . substr($class, 0, $split) . '; ' . $readonly . 'final class ' . substr($class, $split + 1)
        . " $relation \\$type { " . implode(' ', $methods) . ' }');
      return $class;
    }

  }

  /**
   * A declaration that can override $method, with its parameter and return types.
   */
  function signature(\ReflectionMethod $method): string {
    $parameters = [];
    foreach ($method->getParameters() as $parameter) {
      $default = $parameter->isDefaultValueAvailable() ? defaultCode($parameter) : '';
      // A default that cannot be written out (an object): an untyped parameter
      // defaulting to NULL is compatible with any parent's.
      $type = $default !== NULL && $parameter->hasType() ? typeCode($parameter->getType()) . ' ' : '';
      $parameters[] = $type
        . ($parameter->isPassedByReference() ? '&' : '')
        . ($parameter->isVariadic() ? '...' : '')
        . '$' . $parameter->getName()
        . ($default === NULL ? ' = NULL' : $default);
    }
    $returns = $method->getReturnType() ?? $method->getTentativeReturnType();
    return 'public ' . ($method->isStatic() ? 'static ' : '') . 'function '
      . ($method->returnsReference() ? '&' : '') . $method->getName()
      . '(' . implode(', ', $parameters) . ')'
      . ($returns === NULL ? '' : ': ' . typeCode($returns));
  }

  /**
   * A parameter's default value as PHP source (` = ...`), or NULL when it has no literal form.
   */
  function defaultCode(\ReflectionParameter $parameter): ?string {
    if ($parameter->isDefaultValueConstant()) {
      $name = (string) $parameter->getDefaultValueConstantName();
      $relative = preg_match('/^(self|static|parent)::/i', $name) === 1;
      return ' = ' . ($relative ? $name : "\\$name");
    }
    $value = $parameter->getDefaultValue();
    return is_object($value) ? NULL : ' = ' . var_export($value, TRUE);
  }

  /**
   * A declared type as PHP source.
   */
  function typeCode(\ReflectionType $type): string {
    if ($type instanceof \ReflectionUnionType) {
      return implode('|', array_map(
        fn (\ReflectionType $member): string => $member instanceof \ReflectionIntersectionType ? '(' . typeCode($member) . ')' : namedTypeCode($member),
        $type->getTypes(),
      ));
    }
    if ($type instanceof \ReflectionIntersectionType) {
      return implode('&', array_map(namedTypeCode(...), $type->getTypes()));
    }
    $code = namedTypeCode($type);
    return $type->allowsNull() && !in_array($type->getName(), ['mixed', 'null'], TRUE) ? "?$code" : $code;
  }

  function namedTypeCode(\ReflectionNamedType $type): string {
    $name = $type->getName();
    return $type->isBuiltin() || in_array(strtolower($name), ['self', 'parent', 'static'], TRUE) ? $name : "\\$name";
  }

  /**
   * The PSR-4 autoloader of the installed modules: `Drupal\<module>\` -> `<module>/src/`.
   */
  final class Psr4Autoloader {

    /**
     * @var array<string, string>
     *   Folders by namespace prefix, longest prefix first.
     */
    private array $folders = [];

    public function __construct(array $map, string $root) {
      foreach ($map as $prefix => $folder) {
        $this->folders[trim($prefix, '\\') . '\\'] = str_starts_with($folder, '/') ? rtrim($folder, '/') : rtrim("$root/$folder", '/');
      }
      uksort($this->folders, fn (string $a, string $b): int => strlen($b) <=> strlen($a));
    }

    public function load(string $class): void {
      [, $file] = $this->locate($class) ?? [NULL, NULL];
      if ($file !== NULL && is_file($file)) {
        // Once: a file that declares some other class was loaded by an earlier lookup.
        require_once $file;
      }
    }

    /**
     * Why $class could not be found, and where it was expected.
     */
    public function notFound(string $class): string {
      $located = $this->locate($class);
      if ($located === NULL) {
        return "class `$class` not found: no installed module's namespace (`Drupal\\<module>\\`) covers it";
      }
      [$prefix, $file] = $located;
      $shown = relativePath($file);
      $rule = "PSR-4 `$prefix` -> `" . relativePath($this->folders[$prefix]) . '/`';
      return is_file($file)
        ? "class `$class` not found: `$shown` does not declare it ($rule); check the file's namespace and class name"
        : "class `$class` not found: no file `$shown` ($rule)";
    }

    /**
     * @return array{string, string}|null
     *   The prefix that covers $class and the file PSR-4 expects it in.
     */
    private function locate(string $class): ?array {
      foreach ($this->folders as $prefix => $folder) {
        if (str_starts_with($class, $prefix)) {
          return [$prefix, $folder . '/' . strtr(substr($class, strlen($prefix)), '\\', '/') . '.php'];
        }
      }
      return NULL;
    }

  }

  /**
   * A path relative to the Drupal project folder, as the user sees it.
   */
  function relativePath(string $path): string {
    $root = getcwd() . '/';
    return str_starts_with($path, $root) ? substr($path, strlen($root)) : $path;
  }

  /**
   * A throwable as a reason: type, message, file:line.
   */
  function describe(\Throwable $error): string {
    $message = get_class($error) . ': ' . str_replace(getcwd() . '/', '', $error->getMessage());
    $evaluations = substr_count($error->getFile(), "eval()'d code");
    return match ($evaluations) {
      0 => $message . ' (' . relativePath($error->getFile()) . ':' . $error->getLine() . ')',
      1 => $message . ' (ai-eval-lsp worker.php:' . $error->getLine() . ')',
      // A generated bridge: PHP's message names the executor's line already.
      default => $message,
    };
  }

  /**
   * Everything printed since output buffering level $level, with its buffers closed.
   */
  function collectOutput(int $level): string {
    $output = '';
    while (ob_get_level() > $level) {
      $output = ob_get_clean() . $output;
    }
    return $output;
  }

  /**
   * The worker's state: the executors it has constructed and the call in progress.
   */
  final class Worker {

    /**
     * The message of a missing bridge method asked for during the current call.
     */
    public static ?string $bridgeFault = NULL;

    /**
     * @var array<string, object>
     *   Executors by class and constructor arguments, constructed once.
     */
    private array $executors = [];

    /**
     * @var array{id: mixed, where: string}|null
     */
    private ?array $call = NULL;

    private readonly Psr4Autoloader $autoloader;

    private readonly int $timeLimit;

    /**
     * Registers the autoloaders: the modules', composer's, then ai_eval's types.
     *
     * @throws \Throwable
     *   When composer's autoloader is missing or fails to load.
     */
    public function __construct(array $config) {
      $this->timeLimit = (int) ($config['timeLimit'] ?? 0);
      $this->autoloader = new Psr4Autoloader($config['psr4'] ?? [], getcwd());
      spl_autoload_register([$this->autoloader, 'load']);
      $composer = $config['composerAutoload'] ?? NULL;
      if (is_string($composer)) {
        if (!is_file($composer)) {
          // require would end the process with a fatal error instead.
          throw new Failure("composer's autoloader `$composer` does not exist");
        }
        $level = ob_get_level();
        ob_start();
        try {
          require $composer;
        }
        finally {
          collectOutput($level);
        }
      }
      spl_autoload_register('Drupal\ai_eval\ai_eval_lsp_declare');
    }

    /**
     * The answer to one request: `applies` or `execute` of one executor.
     */
    public function handle(array $message): array {
      $request = is_array($message['params'] ?? NULL) ? $message['params'] : [];
      $request['method'] = $message['method'] ?? '';
      $class = (string) ($request['class'] ?? '');
      $where = "`$class::" . $request['method'] . '()`';
      self::$bridgeFault = NULL;
      $this->call = ['id' => $message['id'] ?? NULL, 'where' => $where];
      $level = ob_get_level();
      ob_start();
      if ($this->timeLimit > 0) {
        // Python kills a worker that runs too long; these limits also end one
        // that outlived its server or that a wrapper such as `ddev exec` left
        // running in a container. set_time_limit() counts CPU time only, so a
        // call blocked in sleep() or I/O needs the alarm, whose default action
        // ends the process.
        set_time_limit($this->timeLimit);
        if (function_exists('pcntl_alarm')) {
          pcntl_alarm($this->timeLimit);
        }
      }
      $error = NULL;
      try {
        $result = $this->run($request, $class, $where);
      }
      catch (Failure $failure) {
        $error = $failure->getMessage();
      }
      finally {
        set_time_limit(0);
        if (function_exists('pcntl_alarm')) {
          pcntl_alarm(0);
        }
        $output = collectOutput($level);
        $this->call = NULL;
      }
      $error = self::$bridgeFault ?? $error;
      $answer = $error === NULL ? ['result' => $result] : ['error' => ['message' => $error]];
      $answered = $error === NULL ? 'result' : 'error';
      if ($output !== '') {
        $answer[$answered]['output'] = $output;
      }
      return ['id' => $message['id'] ?? NULL] + $answer;
    }

    /**
     * Reports a call that ended the process: a fatal error, exit() or die().
     */
    public function shutdown(): void {
      if ($this->call === NULL) {
        return;
      }
      $output = collectOutput(0);
      $error = error_get_last();
      $cause = $error !== NULL && ($error['type'] & FATAL_ERRORS)
        ? 'a PHP fatal error: ' . str_replace(getcwd() . '/', '', $error['message']) . ' (' . relativePath($error['file']) . ':' . $error['line'] . ')'
        : 'exit() or die()';
      send([
        'id' => $this->call['id'],
        'error' => [
          'message' => "{$this->call['where']} ended the PHP worker with $cause; the next check starts a new worker",
          'exited' => TRUE,
          'output' => $output,
        ],
      ]);
    }

    /**
     * @throws \AiEvalLsp\Worker\Failure
     */
    private function run(array $request, string $class, string $where): array {
      $executor = $this->executor($class, $request['arguments'] ?? []);
      try {
        if ($request['method'] === 'applies') {
          // Truthy, as `if ($executor->applies($check))` reads it.
          return ['applies' => (bool) $executor->applies($request['check'])];
        }
        $outcome = $executor->execute($request['check'], $request['response'], $request['context']);
      }
      catch (\Throwable $error) {
        throw new Failure("$where threw " . describe($error));
      }
      if (!is_a($outcome, OUTCOME_CLASS)) {
        throw new Failure("$where returned " . get_debug_type($outcome) . ', not a ' . OUTCOME_CLASS . ': return `new CheckOutcome($id, $kind, $score, $passed, $reason)`');
      }
      return ['outcome' => readOutcome($outcome, $where)];
    }

    /**
     * The executor of $class with these services.yml arguments, constructed once.
     *
     * @throws \AiEvalLsp\Worker\Failure
     */
    private function executor(string $class, array $arguments): object {
      $key = $class . "\0" . json_encode($arguments);
      if (isset($this->executors[$key])) {
        return $this->executors[$key];
      }
      try {
        $exists = class_exists($class);
      }
      catch (\Throwable $error) {
        throw new Failure("loading `$class` threw " . describe($error));
      }
      if (!$exists) {
        throw new Failure($this->autoloader->notFound($class));
      }
      $reflection = new \ReflectionClass($class);
      if (!$reflection->implementsInterface(EXECUTOR_INTERFACE)) {
        throw new Failure("`$class` does not implement " . EXECUTOR_INTERFACE . ' (' . relativePath((string) $reflection->getFileName()) . ':' . $reflection->getStartLine() . '): add `implements CheckExecutorInterface` to its declaration');
      }
      try {
        $executor = new $class(...constructorArguments($reflection, $arguments));
      }
      catch (Failure $failure) {
        throw $failure;
      }
      catch (\Throwable $error) {
        throw new Failure("constructing `$class` threw " . describe($error));
      }
      return $this->executors[$key] = $executor;
    }

  }

  /**
   * The constructor arguments a services.yml `arguments:` list or map stands for.
   *
   * @throws \AiEvalLsp\Worker\Failure
   */
  function constructorArguments(\ReflectionClass $class, array $arguments): array {
    $parameters = $class->getConstructor()?->getParameters() ?? [];
    $byName = [];
    foreach ($parameters as $parameter) {
      $byName[$parameter->getName()] = $parameter;
    }
    $last = $parameters === [] ? NULL : $parameters[count($parameters) - 1];
    $positional = [];
    $named = [];
    foreach ($arguments as $key => $value) {
      if (is_int($key)) {
        $parameter = $parameters[$key] ?? ($last?->isVariadic() ? $last : NULL);
        $positional[] = argument($value, $parameter?->getType());
      }
      else {
        // Symfony names an argument `$name`.
        $name = ltrim($key, '$');
        $named[$name] = argument($value, ($byName[$name] ?? NULL)?->getType());
      }
    }
    return $positional + $named;
  }

  /**
   * One services.yml argument as the container would pass it.
   *
   * @throws \AiEvalLsp\Worker\Failure
   */
  function argument(mixed $value, ?\ReflectionType $declared): mixed {
    if (is_array($value)) {
      return array_map(fn (mixed $item): mixed => argument($item, NULL), $value);
    }
    if (!is_string($value)) {
      return $value;
    }
    if (str_starts_with($value, '@@')) {
      return substr($value, 1);
    }
    if (str_starts_with($value, '@')) {
      $optional = substr($value, 1, 1) === '?';
      $service = ltrim(substr($value, 1), '?!');
      if ($service === CHRF || $service === RESOLVER) {
        return Adapters::bridge($service, $declared);
      }
      if ($optional) {
        return NULL;
      }
      throw new Failure("needs the Drupal service `@$service`, which exists only in a running site");
    }
    if (preg_match('/%[^%\s]+%/', str_replace('%%', '', $value), $match)) {
      throw new Failure("needs the Drupal parameter `$match[0]`, which exists only in a running site");
    }
    return str_replace('%%', '%', $value);
  }

  /**
   * The five fields of a CheckOutcome, read by reflection.
   *
   * ai_eval's own class may name its properties differently from the stand-in
   * below: they are matched by name (checkId/check_id/id, kind, score,
   * passed/pass, reason), else taken as the first five in declaration order.
   *
   * @throws \AiEvalLsp\Worker\Failure
   */
  function readOutcome(object $outcome, string $where): array {
    $properties = [];
    foreach ((new \ReflectionObject($outcome))->getProperties() as $property) {
      if (!$property->isStatic()) {
        $properties[$property->getName()] = $property->isInitialized($outcome) ? $property->getValue($outcome) : NULL;
      }
    }
    $byNormalName = [];
    foreach ($properties as $name => $value) {
      $byNormalName[strtolower(str_replace('_', '', $name))] ??= $name;
    }
    $aliases = ['checkId' => ['checkid', 'id'], 'kind' => ['kind'], 'score' => ['score'], 'passed' => ['passed', 'pass'], 'reason' => ['reason']];
    $chosen = [];
    foreach ($aliases as $field => $names) {
      foreach ($names as $name) {
        if (isset($byNormalName[$name])) {
          $chosen[$field] = $byNormalName[$name];
          break;
        }
      }
    }
    if (count($chosen) < 5) {
      $names = array_keys($properties);
      if (count($names) < 5) {
        throw new Failure("$where returned a " . get_class($outcome) . ' whose properties (' . implode(', ', $names) . ') cannot be read as check id, kind, score, passed and reason');
      }
      $chosen = array_combine(array_keys($aliases), array_slice($names, 0, 5));
    }
    $fields = array_map(fn (string $name): mixed => $properties[$name], $chosen);
    $expected = ['checkId' => 'string', 'kind' => 'string', 'score' => 'number', 'passed' => 'bool', 'reason' => 'string'];
    foreach ($expected as $field => $type) {
      $value = $fields[$field];
      $fits = match ($type) {
        'number' => (is_int($value) || is_float($value)) && is_finite((float) $value),
        'bool' => is_bool($value),
        // ai_eval allows an empty check id; a number is as good as its string.
        'string' => is_string($value) || is_int($value) || $value === NULL,
      };
      if (!$fits) {
        $shown = is_float($value) ? (string) $value : get_debug_type($value);
        throw new Failure("$where returned a CheckOutcome whose $field (property `\${$chosen[$field]}`) is $shown, not a $type");
      }
    }
    foreach (['checkId', 'kind', 'reason'] as $field) {
      $fields[$field] = (string) $fields[$field];
    }
    $fields['score'] = (float) $fields['score'];
    return $fields;
  }

  /**
   * Serves requests until Python closes the pipe.
   */
  function main(): void {
    // Errors and warnings go to STDERR, never into the protocol.
    ini_set('display_errors', 'stderr');
    ini_set('log_errors', '0');
    ini_set('html_errors', '0');
    if (ini_get('memory_limit') === '-1') {
      // The CLI default is unlimited; a runaway executor should fail, not
      // take the editor's machine with it.
      ini_set('memory_limit', '512M');
    }
    $init = receive();
    if ($init === NULL) {
      return;
    }
    $config = is_array($init['params'] ?? NULL) ? $init['params'] : [];
    try {
      $worker = new Worker($config);
    }
    catch (Failure $failure) {
      send(['id' => $init['id'] ?? NULL, 'error' => ['message' => $failure->getMessage()]]);
      return;
    }
    catch (\Throwable $error) {
      send(['id' => $init['id'] ?? NULL, 'error' => ['message' => "loading composer's autoloader `{$config['composerAutoload']}` threw " . describe($error)]]);
      return;
    }
    register_shutdown_function([$worker, 'shutdown']);
    send(['id' => $init['id'] ?? NULL, 'result' => ['ready' => TRUE]]);
    while (TRUE) {
      try {
        $request = receive();
      }
      catch (\JsonException $error) {
        send(['id' => NULL, 'error' => ['message' => 'the PHP worker could not read the request: ' . $error->getMessage()]]);
        continue;
      }
      if ($request === NULL) {
        return;
      }
      send($worker->handle($request));
    }
  }

}

namespace Drupal\ai_eval {

  /**
   * Declares one of ai_eval's types for a codebase that lacks the module.
   *
   * Registered as the last autoloader, so ai_eval's own classes win wherever
   * its `src/` folder is among the modules. The shapes follow ai_eval's
   * documentation of writing a check executor.
   */
  function ai_eval_lsp_declare(string $type): void {
    switch ($type) {
      case 'Drupal\ai_eval\CheckExecutorInterface':
        interface CheckExecutorInterface {

          public function applies(array $check): bool;

          public function execute(array $check, string $response, array $context): CheckOutcome;

        }
        break;

      case 'Drupal\ai_eval\CheckSchemaProviderInterface':
        interface CheckSchemaProviderInterface {

          public function checkSchemaDefinitions(): array;

        }
        break;

      case 'Drupal\ai_eval\CheckOutcome':
        final class CheckOutcome {

          public readonly string $checkId;

          public readonly string $kind;

          public readonly float $score;

          public readonly bool $passed;

          public readonly string $reason;

          public function __construct(string $checkId, string $kind, float $score, bool $passed, string $reason) {
            $this->checkId = $checkId;
            $this->kind = $kind;
            // The rubric scale. NAN is no score: the lowest, as in the Python API
            // (PHP's min() and max() would make it 1.0).
            $this->score = is_nan($score) ? 0.0 : max(0.0, min(1.0, $score));
            $this->passed = $passed;
            $this->reason = $reason;
          }

        }
        break;
    }
  }

}

namespace {

  \AiEvalLsp\Worker\main();

}
