// An MPU-6050 read with Wire by its registers, in the common raw style: the register
// address written without a stop, then a burst of 14 bytes from ACCEL_XOUT_H (0x3B).
//
// Commands on Serial (115200 baud), each answered "ok":
//   i              print "i <WHO_AM_I>"
//   w <reg> <val>  write a register (decimal), e.g. "w 107 0" wakes the chip
//   r              print "r <ax> <ay> <az> <temp> <gx> <gy> <gz>" (raw int16) and
//                  "c <az in g> <gz in deg/s> <temp in C>" scaled by the ranges last set
// Written for the tests of the firmware-in-the-loop harness.

#include <Wire.h>

#ifndef MPU_ADDR
#define MPU_ADDR 0x68
#endif

const float ACCEL_LSB[4] = {16384.0, 8192.0, 4096.0, 2048.0};  // per g, by AFS_SEL
const float GYRO_LSB[4] = {131.0, 65.5, 32.8, 16.4};           // per deg/s, by FS_SEL
uint8_t accelRange = 0, gyroRange = 0;

char line[32];
byte used = 0;

void writeRegister(uint8_t reg, uint8_t value) {
  Wire.beginTransmission(MPU_ADDR);
  Wire.write(reg);
  Wire.write(value);
  Wire.endTransmission();
  if (reg == 0x1C) {
    accelRange = (value >> 3) & 3;
  } else if (reg == 0x1B) {
    gyroRange = (value >> 3) & 3;
  }
}

uint8_t readRegister(uint8_t reg) {
  Wire.beginTransmission(MPU_ADDR);
  Wire.write(reg);
  Wire.endTransmission(false);
  Wire.requestFrom(MPU_ADDR, 1);
  return Wire.read();
}

void readAll() {
  int16_t raw[7];
  Wire.beginTransmission(MPU_ADDR);
  Wire.write(0x3B);
  Wire.endTransmission(false);
  Wire.requestFrom(MPU_ADDR, 14, true);
  for (int i = 0; i < 7; i++) {
    raw[i] = Wire.read() << 8 | Wire.read();
  }
  Serial.print("r");
  for (int i = 0; i < 7; i++) {
    Serial.print(' ');
    Serial.print(raw[i]);
  }
  Serial.println();
  Serial.print("c ");
  Serial.print(raw[2] / ACCEL_LSB[accelRange], 4);
  Serial.print(' ');
  Serial.print(raw[6] / GYRO_LSB[gyroRange], 3);
  Serial.print(' ');
  Serial.println(raw[3] / 340.0 + 36.53, 2);
}

void setup() {
  Serial.begin(115200);
  Wire.begin();
}

void loop() {
  while (Serial.available() > 0) {
    char c = Serial.read();
    if (c != '\n') {
      if (used < sizeof(line) - 1) {
        line[used++] = c;
      }
      continue;
    }
    line[used] = 0;
    used = 0;
    char *rest = line + 1;
    long reg = strtol(rest, &rest, 10);
    long value = strtol(rest, &rest, 10);
    if (line[0] == 'i') {
      Serial.print("i ");
      Serial.println(readRegister(0x75));
    } else if (line[0] == 'w') {
      writeRegister(reg, value);
    } else if (line[0] == 'r') {
      readAll();
    }
    Serial.println("ok");
  }
}
