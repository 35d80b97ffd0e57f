package io.configwatch.detect;

import java.io.Serializable;

/**
 * One documented key ({@code udfs.rules.keysets.KeySpec}): its ConfigDef type name, its documented
 * default (null: no default) and whether the client requires it.
 */
public record KeySpec(String type, String defaultValue, boolean required) implements Serializable {}
