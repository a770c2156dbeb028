; Definitions and references in Python source.
; Capture names: definition.<kind> on the defining node, name on its identifier,
; reference.<kind> on the referencing node. Qualified names, signatures and scopes are
; derived in mapper/ingest/code.py from the captured nodes.

(class_definition
  name: (identifier) @name) @definition.class

(function_definition
  name: (identifier) @name) @definition.function

; module-level and class-level constants: NAME = value
(module
  (expression_statement
    (assignment left: (identifier) @name) @definition.constant))

(class_definition
  body: (block
    (expression_statement
      (assignment left: (identifier) @name) @definition.constant)))

(call
  function: [(identifier) (attribute)] @name) @reference.call

(import_statement) @reference.import
(import_from_statement) @reference.import
