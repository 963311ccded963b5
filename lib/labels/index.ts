// lib/labels — label syntax, built-in labels, and parsing node labels from flags, files and env.
export {
  LABEL_RULES,
  RESERVED_LABEL_PREFIX,
  isReservedPrefix,
  labelKeyProblem,
  labelValueProblem,
  validateLabelKey,
  validateLabelValue,
  validateLabels,
  type KeyOptions,
} from './validate.ts';
export {
  ACCELERATOR_TYPE_LABEL,
  ACTOR_ID_LABEL,
  AVAILABILITY_REGION_LABEL,
  AVAILABILITY_ZONE_LABEL,
  MARKET_TYPE_LABEL,
  NODE_GROUP_LABEL,
  NODE_ID_LABEL,
  NODE_IP_LABEL,
  NODE_NAME_LABEL,
  builtinNodeLabels,
  isReservedKey,
  type BuiltinNodeFacts,
} from './builtin.ts';
export { composeLabels, parseLabelsFlag, parseLabelsYaml } from './parse.ts';
