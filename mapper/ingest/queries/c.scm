; Definitions and references in C source and headers.

(function_definition
  declarator: (_) @name) @definition.function

; prototypes (those inside function bodies are dropped in code.py)
(declaration
  declarator: (function_declarator) @name) @definition.function

(struct_specifier
  name: (type_identifier) @name
  body: (field_declaration_list)) @definition.struct

(type_definition
  type: (struct_specifier body: (field_declaration_list))
  declarator: (type_identifier) @name) @definition.struct

(enum_specifier
  name: (type_identifier) @name
  body: (enumerator_list)) @definition.enum

(type_definition
  type: (enum_specifier body: (enumerator_list))
  declarator: (type_identifier) @name) @definition.enum

(enumerator
  name: (identifier) @name) @definition.enumerator

; object-like macros; values starting with _IO/_IOR/_IOW/_IOWR become ioctl numbers
(preproc_def
  name: (identifier) @name) @definition.macro

(preproc_function_def
  name: (identifier) @name) @definition.macro

(call_expression
  function: [(identifier) (field_expression)] @name) @reference.call

(preproc_include
  path: (_) @name) @reference.include
