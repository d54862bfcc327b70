<?php

declare(strict_types=1);

namespace Drupal\support_assistant\CheckExecutor;

use Drupal\ai_eval\CheckExecutorInterface;
use Drupal\ai_eval\CheckOutcome;
use Drupal\ai_eval\CheckSchemaProviderInterface;

/**
 * Executes the word_count check kind: response length within a word range.
 *
 * Pure and dependency-free. Scores 1.0 inside the range and 0.0 outside it;
 * a range is a hard boundary, so there is no meaningful partial credit.
 * Authoring errors fail the check with the cause in the reason.
 */
final class WordCountExecutor implements CheckExecutorInterface, CheckSchemaProviderInterface {

  /**
   * {@inheritdoc}
   */
  public function applies(array $check): bool {
    return ($check['kind'] ?? '') === 'word_count';
  }

  /**
   * {@inheritdoc}
   */
  public function execute(array $check, string $response, array $context): CheckOutcome {
    $id = (string) ($check['id'] ?? '');

    $min = $check['min'] ?? 0;
    $max = $check['max'] ?? NULL;
    if (!is_int($min) || $min < 0 || ($max !== NULL && (!is_int($max) || $max < $min))) {
      return new CheckOutcome($id, 'word_count', 0.0, FALSE, 'invalid min/max on the check');
    }

    $words = preg_split('/\s+/u', trim($response), -1, PREG_SPLIT_NO_EMPTY);
    if ($words === FALSE) {
      return new CheckOutcome($id, 'word_count', 0.0, FALSE, 'response could not be split into words');
    }
    $count = count($words);

    if ($count < $min) {
      return new CheckOutcome($id, 'word_count', 0.0, FALSE, sprintf('%d words, minimum %d', $count, $min));
    }
    if ($max !== NULL && $count > $max) {
      return new CheckOutcome($id, 'word_count', 0.0, FALSE, sprintf('%d words, maximum %d', $count, $max));
    }

    return new CheckOutcome($id, 'word_count', 1.0, TRUE, sprintf('%d words, within range', $count));
  }

  /**
   * {@inheritdoc}
   */
  public function checkSchemaDefinitions(): array {
    return [
      'word_count' => [
        'allOf' => [
          ['$ref' => '#/$defs/check_base'],
          [
            'type' => 'object',
            'required' => ['kind'],
            'properties' => [
              'kind' => ['const' => 'word_count'],
              'min' => ['type' => 'integer', 'minimum' => 0],
              'max' => ['type' => 'integer', 'minimum' => 0],
            ],
          ],
        ],
        'unevaluatedProperties' => FALSE,
      ],
    ];
  }

}
